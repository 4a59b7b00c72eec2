// tests/core/test_reference_kernels.cpp — the reference loops (core/reference/) against the
// fast CPU kernels (core/cpu/), op by op, through the native API: the same call made under
// KernelMode::Fast and under KernelMode::Reference (core/kernel_mode.h).
//
// Layouts: odd sizes, large enough that the fast path uses threads and streaming-free
// vector loops, transposed and step-2 strided views, broadcasting, a 0-d operand, empty
// tensors; values include NaN, ±inf, ±0, denormals and integers that overflow.
// Exactness, and the stated tolerances where a fast kernel adds in another order:
//   - elementwise, where, fill, copy, index ops, prod, max/min/arg*, log_softmax,
//     cross-entropy, the SGD step, one_hot, integer sums and GEMMs: the same bits
//     (NaN matches any NaN);
//   - float sums and means over a contiguous row of 16 or more values: the fast loop adds 16
//     lanes (float32: runs of 256 in float first): within 1e-6 (float32) or 1e-12 (float64)
//     times the sum of the magnitudes (the partial sums' rounding scales with those);
//   - softmax over the last dim of 16 or more: the normaliser, likewise: relative 1e-6;
//   - float GEMM: the same bits when the fast micro-kernel has FMA (AVX2/AVX-512) and
//     k <= 256 (one k slice); for longer k and the portable kernel within k * 9 * 1e-7
//     (float32; 1e-15 float64), 9 being the largest product of two test values.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <type_traits>
#include <string>
#include <vector>

#include <ember/core/adam_step.h>
#include <ember/core/backend.h>
#include <ember/core/cpu/cpu_kernels.h>
#include <ember/core/cpu/gemm_kernels.h>
#include <ember/core/factories.h>
#include <ember/core/kernel_mode.h>
#include <ember/core/native.h>
#include <ember/core/op_list.h>
#include <ember/core/reference/reference_kernels.h>

#include "forced_gemm_kernel.h"
#include "test_support.h"

namespace {

using namespace ember;
using testing::to_vector;

// op() under each mode; the inputs are made by the caller, once.
struct Pair {
  Tensor fast, reference;
};
Pair both_modes(const std::function<Tensor()>& op) {
  Pair result;
  {
    KernelModeGuard mode(KernelMode::Fast);
    result.fast = op();
  }
  {
    KernelModeGuard mode(KernelMode::Reference);
    result.reference = op();
  }
  return result;
}

// Same dtype, shape and bits element by element (a NaN matches any NaN).
void require_same_bits(const Tensor& reference, const Tensor& fast) {
  REQUIRE(reference.dtype() == fast.dtype());
  REQUIRE(reference.sizes() == fast.sizes());
  if (reference.numel() == 0) return;
  Tensor r = native::contiguous(reference), f = native::contiguous(fast);
  EMBER_DISPATCH_ALL(r.dtype(), {
    const scalar_t* x = r.data_ptr<scalar_t>();
    const scalar_t* y = f.data_ptr<scalar_t>();
    for (std::int64_t i = 0; i < r.numel(); ++i) {
      bool same = std::memcmp(&x[i], &y[i], sizeof(scalar_t)) == 0;
      if constexpr (std::is_floating_point_v<scalar_t>) same = same || (std::isnan(x[i]) && std::isnan(y[i]));
      if (!same) {
        INFO("element " << i << ": reference " << +x[i] << ", fast " << +y[i]);
        REQUIRE(same);
      }
    }
  });
}

// |reference - fast| <= rtol |reference| + atol, NaN and ±inf matching exactly.
void require_close(const Tensor& reference, const Tensor& fast, double rtol, double atol = 1e-30) {
  REQUIRE(reference.dtype() == fast.dtype());
  REQUIRE(reference.sizes() == fast.sizes());
  const auto r = to_vector(reference), f = to_vector(fast);
  for (std::size_t i = 0; i < r.size(); ++i) {
    INFO("element " << i << ": reference " << r[i] << ", fast " << f[i]);
    if (std::isnan(r[i]) || std::isinf(r[i])) {
      REQUIRE((std::isnan(f[i]) ? std::isnan(r[i]) : f[i] == r[i]));
    } else {
      REQUIRE(std::abs(r[i] - f[i]) <= rtol * std::abs(r[i]) + atol);
    }
  }
}

void require_same_bits(const Pair& pair) { require_same_bits(pair.reference, pair.fast); }

// op() gives the same bits in both modes, or throws the same message in both.
void require_same_bits_or_same_error(const std::function<Tensor()>& op) {
  std::string fast_error;
  try {
    KernelModeGuard mode(KernelMode::Fast);
    op();
  } catch (const Error& error) {
    fast_error = error.what();
  }
  if (fast_error.empty()) {
    require_same_bits(both_modes(op));
    return;
  }
  KernelModeGuard mode(KernelMode::Reference);
  CHECK_THROWS_WITH(op(), fast_error);
}

// Deterministic values of a dtype: a sine pattern; floating tensors get NaN, ±inf, ±0, a
// denormal and a huge value sprinkled in when `specials`; integers reach their extremes.
Tensor values(const Shape& sizes, DType dtype, double phase, bool specials = true) {
  Tensor t = empty(sizes, TensorOptions().dtype(kFloat64));
  double* p = t.data_ptr<double>();
  for (std::int64_t i = 0; i < t.numel(); ++i) p[i] = 3.0 * std::sin(0.37 * static_cast<double>(i) + phase);
  if (dtype == kFloat32 || dtype == kFloat64) {
    if (specials) {
      const double special[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1e-40, -1e-310, 1e30};
      for (std::int64_t i = 0, k = 0; i < t.numel(); i += 7, ++k) p[i] = special[k % 8];
    }
    return native::to_dtype(t, dtype);
  }
  if (dtype == kBool) return native::gt(t, zeros_like(t));
  // Integers: small values, with the dtype's extremes every 11th element (overflow wraps).
  Tensor out = native::to_dtype(native::mul(t, scalar_to_tensor(10.0, kCPU)), dtype);
  EMBER_DISPATCH_ALL(dtype, {
    scalar_t* q = out.data_ptr<scalar_t>();
    for (std::int64_t i = 0; i < out.numel(); i += 11)
      q[i] = i % 2 == 0 ? std::numeric_limits<scalar_t>::max() : std::numeric_limits<scalar_t>::lowest();
  });
  return out;
}

// Two operands of one dtype in every layout an elementwise kernel meets.
struct Operands {
  std::string layout;
  Tensor a, b;
};
std::vector<Operands> layouts(DType dtype) {
  return {
      {"contiguous 37x23", values({37, 23}, dtype, 0.1), values({37, 23}, dtype, 0.7)},
      {"threaded 301x300", values({301, 300}, dtype, 0.2), values({301, 300}, dtype, 0.9)},
      {"transposed", native::t(values({23, 37}, dtype, 0.3)), values({37, 23}, dtype, 0.4)},
      {"step 2", native::slice(values({37, 46}, dtype, 0.5), 1, 0, std::nullopt, 2), native::t(values({23, 37}, dtype, 0.6))},
      {"broadcast 37x1 by 1x23", values({37, 1}, dtype, 0.8), values({1, 23}, dtype, 1.1)},
      {"tensor op 0-d", values({37, 23}, dtype, 1.3), values({}, dtype, 1.7, false)},
      {"0-d", values({}, dtype, 0.9, false), values({}, dtype, 2.3, false)},
      {"empty", values({0, 23}, dtype, 0.1), values({0, 23}, dtype, 0.2)},
  };
}

const DType kAllDTypes[] = {kFloat32, kFloat64, kInt32, kInt64, kUInt8, kBool};

bool is_float(DType dtype) { return dtype == kFloat32 || dtype == kFloat64; }

}  // namespace

// Every family with a reference loop serves it to CPU tensors in reference mode, and the fast
// kernel otherwise. (A family whose CPUReference slot were empty would fall back to the fast
// kernel, and every comparison below would pass without testing anything.)
TEST_CASE("reference kernels: the CPU's kernel slots serve them in reference mode only", "[core][reference]") {
  auto check = [](const auto& slot, auto fast_kernel, auto reference_kernel) {
    INFO(slot.family());
    {
      KernelModeGuard mode(KernelMode::Fast);
      CHECK(slot.kernel_for(kCPU) == fast_kernel);
    }
    KernelModeGuard mode(KernelMode::Reference);
    CHECK(slot.kernel_for(kCPU) == reference_kernel);
  };
  check(fill_kernel, &cpu::fill, &reference::fill);
  check(copy_kernel, &cpu::copy, &reference::copy);
  check(unary_kernel, &cpu::unary, &reference::unary);
  check(binary_kernel, &cpu::binary, &reference::binary);
  check(where_kernel, &cpu::where, &reference::where);
  check(reduce_kernel, &cpu::reduce, &reference::reduce);
  check(softmax_kernel, &cpu::softmax, &reference::softmax);
  check(gemm_kernel, &cpu::gemm, &reference::gemm);
  check(index_select_kernel, &cpu::index_select, &reference::index_select);
  check(index_add_kernel, &cpu::index_add, &reference::index_add);
  check(gather_kernel, &cpu::gather, &reference::gather);
  check(scatter_add_kernel, &cpu::scatter_add, &reference::scatter_add);
  check(cross_entropy_kernel, &cpu::cross_entropy, &reference::cross_entropy);
  check(sgd_step_kernel, &cpu::sgd_step, &reference::sgd_step);
  check(adam_step_kernel, &cpu::adam_step, &reference::adam_step);
  check(one_hot_kernel, &cpu::one_hot, &reference::one_hot);
  check(foreach_norm_kernel, &cpu::foreach_norm, &reference::foreach_norm);
  check(batch_norm_kernel, &cpu::batch_norm, &reference::batch_norm);
  check(batch_norm_backward_kernel, &cpu::batch_norm_backward, &reference::batch_norm_backward);
  check(conv2d_kernel, &cpu::conv2d, &reference::conv2d);
  check(conv2d_backward_input_kernel, &cpu::conv2d_backward_input, &reference::conv2d_backward_input);
  check(conv2d_backward_weight_kernel, &cpu::conv2d_backward_weight, &reference::conv2d_backward_weight);
  check(pool2d_kernel, &cpu::pool2d, &reference::pool2d);
  check(pool2d_backward_kernel, &cpu::pool2d_backward, &reference::pool2d_backward);
  check(embedding_backward_kernel, &cpu::embedding_backward, &reference::embedding_backward);
  check(topk_kernel, &cpu::topk, &reference::topk);
  // No reference loop: a memcpy is a memcpy.
  KernelModeGuard mode(KernelMode::Reference);
  CHECK(copy_bytes_kernel.kernel_for(kCPU) == &cpu::copy_bytes);
}

TEST_CASE("reference kernels: unary ops give the fast kernels' bits", "[core][reference]") {
  for (DType dtype : kAllDTypes) {
    for (const Operands& o : layouts(dtype)) {
      INFO(dtype_name(dtype) << ", " << o.layout);
      const Tensor& x = o.a;
      // Every row of core/op_list.h (and its variants), whatever the dtype: where native::
      // refuses a dtype, both modes must refuse it alike.
      std::vector<std::pair<std::string, std::function<Tensor()>>> ops;
#define EMBER_TEST_UNARY(Functor, ...) ops.push_back({#Functor, [&] { return native::unary(UnaryOp::Functor, x); }});
#define EMBER_TEST_NAMED_UNARY(name, Functor, ...) EMBER_TEST_UNARY(Functor)
      EMBER_UNARY_OPS(EMBER_TEST_NAMED_UNARY)
      EMBER_UNARY_VARIANTS(EMBER_TEST_UNARY)
#undef EMBER_TEST_NAMED_UNARY
#undef EMBER_TEST_UNARY
      if (dtype != kBool) {
        ops.push_back({"clamp", [&] { return native::clamp(x, Scalar(1), Scalar(2)); }});
        ops.push_back({"clamp low", [&] { return native::clamp(x, Scalar(0), std::nullopt); }});
        ops.push_back({"pow 2", [&] { return native::pow(x, Scalar(2)); }});
        ops.push_back({"pow 3", [&] { return native::pow(x, Scalar(3)); }});
      }
      if (is_float(dtype)) {
        for (double e : {0.5, -0.5, -1.0, -2.0, 1.7}) ops.push_back({"pow " + std::to_string(e), [&x, e] { return native::pow(x, Scalar(e)); }});
      }
      for (const auto& [name, op] : ops) {
        INFO(name);
        require_same_bits_or_same_error(op);
      }
    }
  }
}

TEST_CASE("reference kernels: binary ops give the fast kernels' bits", "[core][reference]") {
  for (DType dtype : kAllDTypes) {
    for (const Operands& o : layouts(dtype)) {
      INFO(dtype_name(dtype) << ", " << o.layout);
      const Tensor &a = o.a, &b = o.b;
      std::vector<std::pair<std::string, std::function<Tensor()>>> ops = {
          {"add", [&] { return native::add(a, b); }},
          {"mul", [&] { return native::mul(a, b); }},
          {"eq", [&] { return native::eq(a, b); }},
          {"ne", [&] { return native::ne(a, b); }},
          {"lt", [&] { return native::lt(a, b); }},
          {"le", [&] { return native::le(a, b); }},
          {"gt", [&] { return native::gt(a, b); }},
          {"ge", [&] { return native::ge(a, b); }},
          {"logical_and", [&] { return native::logical_and(a, b); }},
          {"maximum", [&] { return native::maximum(a, b); }},
          {"minimum", [&] { return native::minimum(a, b); }},
      };
      // The backward rows of core/op_list.h (gelu_backward(grad, x), ...), refused alike where
      // native:: refuses the dtype.
#define EMBER_TEST_BACKWARD(name, ...) ops.push_back({#name, [&] { return native::name(a, b); }});
      EMBER_BACKWARD_OPS(EMBER_TEST_BACKWARD)
#undef EMBER_TEST_BACKWARD
      if (dtype != kBool) {
        ops.push_back({"add alpha 2", [&] { return native::add(a, b, 2); }});
        ops.push_back({"add alpha -1", [&] { return native::add(a, b, -1); }});
        ops.push_back({"sub", [&] { return native::sub(a, b); }});
        ops.push_back({"sub alpha 3", [&] { return native::sub(a, b, 3); }});
        ops.push_back({"div", [&] { return native::div(a, b); }});
      }
      if (is_float(dtype)) {
        ops.push_back({"add alpha 0.3", [&] { return native::add(a, b, 0.3); }});
        ops.push_back({"pow", [&] { return native::pow(a, b); }});
      }
      for (const auto& [name, op] : ops) {
        INFO(name);
        require_same_bits_or_same_error(op);
      }
    }
  }
}

TEST_CASE("reference kernels: where, fill_ and copy_ with every cast give the fast kernels' bits", "[core][reference]") {
  for (DType dtype : kAllDTypes) {
    for (const Operands& o : layouts(dtype)) {
      INFO(dtype_name(dtype) << ", " << o.layout);
      Tensor condition = values(o.a.sizes(), kBool, 0.4);
      require_same_bits(both_modes([&] { return native::where(condition, o.a, o.b); }));
      require_same_bits(both_modes([&] {
        Tensor out = native::clone(o.a);
        native::fill_(native::t(out.dim() == 2 ? out : native::unsqueeze(out, 0)), Scalar(2));
        return out;
      }));
      for (DType to : kAllDTypes) {
        INFO("to " << dtype_name(to));
        require_same_bits(both_modes([&] {
          // A transposed destination: the copy walks it with strides.
          Tensor out = native::t(empty({o.a.dim() == 2 ? o.a.size(1) : 1, o.a.dim() == 2 ? o.a.size(0) : 1},
                                       TensorOptions().dtype(to)));
          native::copy_(out, o.a.dim() == 2 ? o.a : native::reshape(o.a, {1, 1}));
          return out;
        }));
      }
    }
  }
}

TEST_CASE("reference kernels: reductions give the fast kernels' bits, float sums within 1e-6", "[core][reference]") {
  for (DType dtype : {kFloat32, kFloat64, kInt64, kInt32, kUInt8, kBool}) {
    INFO(dtype_name(dtype));
    const bool floating = is_float(dtype);
    Tensor x = values({7, 33, 5}, dtype, 0.3, /*specials=*/false);
    Tensor special = values({7, 33, 5}, dtype, 0.3);
    const double rtol = dtype == kFloat32 ? 1e-6 : 1e-12;
    for (std::int64_t dim : {0, 1, 2}) {
      INFO("dim " << dim);
      // Along dims 0 and 1 the fast loop adds in order of r as well; dim 2 has only 5 values.
      require_same_bits(both_modes([&] { return native::sum(x, {dim}, false); }));
      if (floating) require_same_bits(both_modes([&] { return native::mean(x, {dim}, false); }));
      if (dtype == kBool) continue;  // PyTorch has no bool prod, max, min or arg*
      require_same_bits(both_modes([&] { return native::prod(special, {dim}, false); }));
      require_same_bits(both_modes([&] { return native::amax(special, {dim}, false); }));
      require_same_bits(both_modes([&] { return native::amin(special, {dim}, true); }));
      require_same_bits(both_modes([&] { return std::get<1>(native::max(special, dim, false)); }));
      require_same_bits(both_modes([&] { return std::get<0>(native::min(special, dim, false)); }));
      require_same_bits(both_modes([&] { return native::argmax(special, dim, false); }));
      require_same_bits(both_modes([&] { return native::argmin(special, dim, true); }));
    }
    // Whole tensors and one long row (the fast loop's lanes and 32768-element blocks).
    Tensor long_row = values({1, 100003}, dtype, 0.1, false);
    for (const Tensor* t : {&x, &long_row}) {
      Pair sum = both_modes([&] { return native::sum(*t, {}, false); });
      if (floating) {
        // Relative to the sum of magnitudes: the rounding of each partial sum is.
        double magnitude = 0.0;
        for (double v : to_vector(*t)) magnitude += std::abs(v);
        require_close(sum.reference, sum.fast, 0.0, rtol * magnitude);
        Pair mean = both_modes([&] { return native::mean(*t, {}, false); });
        require_close(mean.reference, mean.fast, 0.0, rtol * magnitude / static_cast<double>(t->numel()));
      } else {
        require_same_bits(sum);  // integers: exact in any order (modulo 2^64)
      }
      if (dtype != kBool) require_same_bits(both_modes([&] { return native::argmax(*t, std::nullopt, false); }));
    }
    // Empty: a sum of nothing is 0, a mean NaN.
    Tensor none = values({4, 0}, dtype, 0.1);
    require_same_bits(both_modes([&] { return native::sum(none, {1}, false); }));
    if (floating) require_same_bits(both_modes([&] { return native::mean(none, {1}, false); }));
    // 0-d.
    Tensor scalar = values({}, dtype, 0.5, false);
    require_same_bits(both_modes([&] { return native::sum(scalar, {}, false); }));
  }
}

TEST_CASE("reference kernels: log_softmax gives the fast bits, softmax too up to 16 classes (else 1e-6)",
          "[core][reference]") {
  for (DType dtype : {kFloat32, kFloat64}) {
    INFO(dtype_name(dtype));
    Tensor x = values({6, 9, 4}, dtype, 0.2);
    for (std::int64_t dim : {0, 1, 2}) {
      INFO("dim " << dim);
      require_same_bits(both_modes([&] { return native::softmax(x, dim); }));
      require_same_bits(both_modes([&] { return native::log_softmax(x, dim); }));
    }
    Tensor wide = values({5, 40}, dtype, 0.6, false);
    require_same_bits(both_modes([&] { return native::log_softmax(wide, 1); }));
    Pair softmax = both_modes([&] { return native::softmax(wide, 1); });
    require_close(softmax.reference, softmax.fast, dtype == kFloat32 ? 1e-6 : 1e-14);
    Tensor empty_rows = values({0, 3}, dtype, 0.1);
    require_same_bits(both_modes([&] { return native::softmax(empty_rows, 1); }));
  }
}

TEST_CASE("reference kernels: the triple-loop GEMM gives the FMA kernels' bits for k <= 256", "[core][reference]") {
  unsetenv("EMBER_GEMM_KERNEL");
  cpu::reload_gemm_kernel_choice();
  struct Case {
    std::int64_t m, k, n;
  };
  const Case cases[] = {{7, 5, 13}, {1, 9, 300}, {33, 17, 1}, {64, 64, 64}, {3, 300, 5}, {0, 4, 3}, {4, 0, 3}, {1, 1, 1}};
  const bool fma_kernel = cpu::active_gemm_kernel_name() != "portable";
  for (DType dtype : {kFloat32, kFloat64, kInt64, kInt32, kUInt8}) {
    for (const Case& c : cases) {
      INFO(dtype_name(dtype) << " m " << c.m << " k " << c.k << " n " << c.n);
      Tensor a = values({c.m, c.k}, dtype, 0.1, false), b = values({c.k, c.n}, dtype, 0.5, false);
      Tensor at = native::contiguous(native::t(a)), bt = native::contiguous(native::t(b));
      Tensor batch_a = values({3, c.m, c.k}, dtype, 0.2, false), batch_b = values({3, c.k, c.n}, dtype, 0.7, false);
      std::vector<std::pair<std::string, std::function<Tensor()>>> ops = {
          {"mm", [&] { return native::mm(a, b); }},
          {"mm of transposed views", [&] { return native::mm(native::t(at), native::t(bt)); }},
          {"bmm", [&] { return native::bmm(batch_a, batch_b); }},
      };
      Tensor bias = values({c.n}, dtype, 0.9, false);
      if (is_float(dtype)) {
        ops.push_back({"addmm", [&] { return native::addmm(bias, a, b); }});
        ops.push_back({"addmm beta 0.5 alpha 2", [&] { return native::addmm(bias, a, b, 0.5, 2.0); }});
      }
      for (const auto& [name, op] : ops) {
        INFO(name);
        Pair result = both_modes(op);
        if (!is_float(dtype) || (fma_kernel && c.k <= 256)) {
          require_same_bits(result);
        } else {
          // Each product is at most 3 * 3: the dot product's rounding scales with k * 9.
          const double bound = static_cast<double>(c.k) * 9.0 * (dtype == kFloat32 ? 1e-7 : 1e-15);
          require_close(result.reference, result.fast, 0.0, bound);
        }
      }
    }
  }
  SECTION("the portable kernel (no FMA) within k * 9 * 1e-7") {
    std::optional<ember::testing::ForcedKernel> forced(std::in_place, "portable");
    Tensor a = values({9, 40}, kFloat32, 0.1, false), b = values({40, 11}, kFloat32, 0.5, false);
    Pair result = both_modes([&] { return native::mm(a, b); });
    forced.reset();
    require_close(result.reference, result.fast, 0.0, 40 * 9.0 * 1e-7);
  }
}

TEST_CASE("reference kernels: addmm in reference mode is the triple loop, bias included", "[core][reference]") {
  // Reference mode has no addmm kernel of its own: the CPU's serves (the dispatch's fallback),
  // copying the bias into C and handing the product to the reference loops. So the result
  // must be theirs exactly, out = fma(beta, bias, alpha * dot) with dot one fma chain in order
  // of p, for a k past the fast kernels' slices (where their sums round differently: the same
  // check in fast mode fails).
  const std::int64_t m = 5, k = 3000, n = 7;
  const Tensor a = values({m, k}, kFloat32, 0.1, false), b = values({k, n}, kFloat32, 0.5, false);
  const Tensor bias = values({n}, kFloat32, 0.9, false);
  KernelModeGuard mode(KernelMode::Reference);
  const Tensor out = native::addmm(bias, a, b, 0.5, 2.0);
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      float dot = 0.0f;
      for (std::int64_t p = 0; p < k; ++p) dot = std::fma(a.data_ptr<float>()[i * k + p], b.data_ptr<float>()[p * n + j], dot);
      const float expected = std::fma(0.5f, bias.data_ptr<float>()[j], 2.0f * dot);
      INFO("element (" << i << ", " << j << ")");
      REQUIRE(out.data_ptr<float>()[i * n + j] == expected);
    }
  }
}

TEST_CASE("reference kernels: index_select, index_add, gather and scatter_add give the fast bits", "[core][reference]") {
  for (DType dtype : kAllDTypes) {
    Tensor self = values({5, 6, 7}, dtype, 0.3);
    for (std::int64_t dim : {0, 1, 2}) {
      INFO(dtype_name(dtype) << " dim " << dim);
      const std::int64_t size = self.size(dim);
      Tensor index = ember::tensor({size - 1, 0, 2, 0, size - 1}, TensorOptions().dtype(kInt64));
      require_same_bits(both_modes([&] { return native::index_select(self, dim, index); }));
      Shape source_sizes = self.sizes();
      source_sizes[static_cast<std::size_t>(dim)] = 5;
      Tensor source = values(source_sizes, dtype, 0.8);
      require_same_bits(both_modes([&] { return native::index_add(self, dim, index, source); }));
      // A full index for gather / scatter_add: position-dependent, repeats included.
      Tensor full_index = empty(source_sizes, TensorOptions().dtype(kInt64));
      for (std::int64_t i = 0; i < full_index.numel(); ++i) full_index.data_ptr<std::int64_t>()[i] = (i * 7 + 3) % size;
      require_same_bits(both_modes([&] { return native::gather(self, dim, full_index); }));
      require_same_bits(both_modes([&] { return native::scatter_add(self, dim, full_index, source); }));
    }
  }
  // index_select over several thread chunks (the fast kernel splits the output rows): an
  // embedding-like lookup on dim 0 (one outer slice, 3000 rows of 64) and dim 1 of a 3-D
  // tensor (3 outer slices of 40 rows of 700).
  Tensor table = values({1000, 64}, kFloat32, 0.3), ids = empty({3000}, TensorOptions().dtype(kInt64));
  for (std::int64_t i = 0; i < 3000; ++i) ids.data_ptr<std::int64_t>()[i] = (i * 37 + 11) % 1000;
  require_same_bits(both_modes([&] { return native::index_select(table, 0, ids); }));
  Tensor planes = values({3, 50, 700}, kFloat32, 0.2), some = empty({40}, TensorOptions().dtype(kInt64));
  for (std::int64_t i = 0; i < 40; ++i) some.data_ptr<std::int64_t>()[i] = (i * 13 + 5) % 50;
  require_same_bits(both_modes([&] { return native::index_select(planes, 1, some); }));
}

// The fast Adam pass (threads, AVX-512/AVX2 clones) and the reference loop run one update
// (core/adam_update.h); each variant takes a different branch of it: Adam's L2 term, AdamW's
// decoupled decay, amsgrad's running maximum (with a NaN, which must win), maximize, and the
// other side of the two-sided lerp (beta1 = 0.3: weight 0.7). 70001 elements: several thread
// chunks, and a tail that is not a whole vector.
TEST_CASE("reference kernels: the Adam step gives the fast pass's bits", "[core][reference]") {
  for (DType dtype : {kFloat32, kFloat64}) {
    INFO(dtype_name(dtype));
    const std::int64_t n = 70001;
    Tensor param = values({n}, dtype, 0.2, false), grad = values({n}, dtype, 0.9, false);
    Tensor exp_avg = values({n}, dtype, 1.4, false);
    Tensor exp_avg_sq = native::abs(values({n}, dtype, 2.1, false));
    Tensor max_exp_avg_sq = native::abs(values({n}, dtype, 0.6));  // specials: a NaN, infinities
    for (int variant = 0; variant < 6; ++variant) {
      INFO("variant " << variant);
      native::AdamStepOptions options;
      options.lr = 0.01;
      options.weight_decay = variant == 1 || variant == 2 ? 0.05 : 0.0;
      options.decoupled_weight_decay = variant == 2;
      options.amsgrad = variant == 3;
      options.maximize = variant == 4;
      options.beta1 = variant == 5 ? 0.3 : 0.9;
      options.step = variant == 0 ? 1.0 : 7.0;
      std::vector<Tensor> moments_fast, moments_reference;
      Pair params = both_modes([&] {
        Tensor p = native::clone(param), m = native::clone(exp_avg), v = native::clone(exp_avg_sq);
        Tensor v_max = native::clone(max_exp_avg_sq);
        REQUIRE(native::adam_step_(p, grad, m, v, v_max, options));
        (kernel_mode() == KernelMode::Fast ? moments_fast : moments_reference) = {m, v, v_max};
        return p;
      });
      require_same_bits(params);
      for (std::size_t i = 0; i < 3; ++i) require_same_bits(moments_reference[i], moments_fast[i]);
    }
  }
}

TEST_CASE("reference kernels: cross-entropy rows, the SGD step and one_hot give the fast bits", "[core][reference]") {
  for (DType dtype : {kFloat32, kFloat64}) {
    INFO(dtype_name(dtype));
    Tensor logits = values({9, 5}, dtype, 0.4, false);
    Tensor target = ember::tensor({0, 4, -100, 2, 1, 3, -100, 0, 4}, TensorOptions().dtype(kInt64));
    for (bool with_grad : {false, true}) {
      Pair losses = both_modes([&] { return native::cross_entropy_rows(logits, target, -100, with_grad, true).losses; });
      require_same_bits(losses);
      if (with_grad)
        require_same_bits(both_modes([&] { return native::cross_entropy_rows(logits, target, -100, true, true).grad_logits; }));
    }
    Tensor param = values({1001}, dtype, 0.2, false), grad = values({1001}, dtype, 0.9, false);
    Tensor buffer = values({1001}, dtype, 1.4, false);
    for (int variant = 0; variant < 5; ++variant) {
      INFO("variant " << variant);
      optim::SGDOptions options;
      options.lr = 0.1;
      options.momentum = variant >= 1 ? 0.9 : 0.0;
      options.dampening = variant == 2 ? 0.25 : 0.0;
      options.weight_decay = variant >= 3 ? 0.01 : 0.0;
      options.nesterov = variant == 3;
      options.maximize = variant == 4;
      const bool first_step = variant == 1;
      Tensor buffer_out_fast, buffer_out_reference;
      Pair params = both_modes([&] {
        Tensor p = native::clone(param), b = native::clone(buffer);
        native::sgd_step_(p, grad, options.momentum != 0.0 ? b : Tensor(), options, first_step);
        (kernel_mode() == KernelMode::Fast ? buffer_out_fast : buffer_out_reference) = b;
        return p;
      });
      require_same_bits(params);
      require_same_bits(buffer_out_reference, buffer_out_fast);
    }
  }
  Tensor labels = ember::tensor({3, 0, 4, 4, 1}, TensorOptions().dtype(kInt64));
  require_same_bits(both_modes([&] { return native::one_hot(labels, 6); }));
  require_same_bits(both_modes([&] { return native::one_hot(empty({0}, TensorOptions().dtype(kInt64)), 3); }));
}
