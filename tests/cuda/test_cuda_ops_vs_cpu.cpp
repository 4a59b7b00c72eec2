// tests/cuda/test_cuda_ops_vs_cpu.cpp — the op suite, run once on the CPU and once on the
// GPU: every op's CUDA result must equal the CPU result (issue 5, "Tests and the GPU check").
//
// Table-driven: one row per op — how to build its inputs for a size n, the op, and how its
// result is compared. Each row runs for n in {1, 7, 31, 1000, 4097} (warp, block and
// vector-tail edges) and for contiguous and non-contiguous inputs (every other element of a
// wider buffer: the view is taken on each device, so the GPU kernels see real strides).
// Tolerances (issue 5): float32 elementwise results within 1e-6 relative of the CPU;
// reductions, GEMM and losses within 1e-5 relative of a float64 reference computed on the
// CPU from the same values; comparisons, indices, casts, copies and max/min exactly.
// Needs a GPU; skipped without one (EMBER_REQUIRE_GPU, test_gpu_skip.cpp).
#include <array>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <ember/core/native.h>
#include <ember/ember.h>

#include "cuda_test_support.h"

namespace {

using namespace ember;
using ember::autograd::TensorList;

enum class Domain { Real, Positive, NearOne, Probability, Index };
enum class Compare {
  Exact,        // bit-identical to the CPU
  Elementwise,  // |gpu - cpu| <= 1e-6 |cpu| + 1e-7
  Accumulated,  // |gpu - ref64| <= 1e-5 (|ref64| + op applied to |inputs| in float64)
  Normalised,   // |gpu - ref64| <= 1e-5 |ref64| + 1e-7 (softmax, losses)
};

struct InputSpec {
  Shape shape;
  Domain domain = Domain::Real;
  std::int64_t index_bound = 0;  // Index: values in [0, bound)
};

struct OpRow {
  std::string name;
  std::function<std::vector<InputSpec>(std::int64_t n)> inputs;
  std::function<Tensor(const TensorList&)> fn;
  Compare compare;
};

// A dense CPU base tensor for a spec (float32, or int64 for indices), seeded per input.
Tensor make_base(const InputSpec& spec, bool non_contiguous, unsigned seed) {
  Shape shape = spec.shape;
  if (non_contiguous && !shape.empty()) shape.back() *= 2;
  std::int64_t numel = 1;
  for (std::int64_t s : shape) numel *= s;
  if (spec.domain == Domain::Index) {
    auto values = testing::random_values<std::int64_t>(numel, 0, static_cast<double>(spec.index_bound - 1), seed);
    Tensor t = ember::empty(shape, TensorOptions().dtype(kInt64));
    std::copy(values.begin(), values.end(), t.data_ptr<std::int64_t>());
    return t;
  }
  double low = -2.0, high = 2.0;
  if (spec.domain == Domain::Positive) low = 0.5, high = 2.0;
  if (spec.domain == Domain::NearOne) low = 0.999, high = 1.001;
  if (spec.domain == Domain::Probability) low = 0.05, high = 0.95;
  auto values = testing::random_values<float>(numel, low, high, seed);
  Tensor t = ember::empty(shape);
  std::copy(values.begin(), values.end(), t.data_ptr<float>());
  return t;
}

// The view the op sees: the base itself, or every other element along the last dim.
Tensor view_of(const Tensor& base, bool non_contiguous) {
  if (!non_contiguous || base.dim() == 0) return base;
  return base.slice(-1, 0, std::nullopt, 2);
}

using L = const TensorList&;
std::vector<InputSpec> one(std::int64_t n) { return {{{n, 3}}}; }
std::vector<InputSpec> one_positive(std::int64_t n) { return {{{n, 3}, Domain::Positive}}; }
std::vector<InputSpec> two(std::int64_t n) { return {{{n, 3}}, {{n, 3}}}; }
std::vector<InputSpec> two_broadcast(std::int64_t n) { return {{{n, 3}}, {{3}}}; }
std::vector<InputSpec> row(std::int64_t n) { return {{{3, n}}}; }

std::vector<OpRow> rows() {
  return {
      // ---- unary elementwise (one templated kernel, one functor each)
      {"neg", one, [](L x) { return -x[0]; }, Compare::Exact},
      {"abs", one, [](L x) { return x[0].abs(); }, Compare::Exact},
      {"sign", one, [](L x) { return ember::sign(x[0]); }, Compare::Exact},
      {"relu", one, [](L x) { return x[0].relu(); }, Compare::Exact},
      {"clamp", one, [](L x) { return x[0].clamp(-0.5, 0.75); }, Compare::Exact},
      {"exp", one, [](L x) { return x[0].exp(); }, Compare::Elementwise},
      {"log", one_positive, [](L x) { return x[0].log(); }, Compare::Elementwise},
      {"sqrt", one_positive, [](L x) { return x[0].sqrt(); }, Compare::Elementwise},
      {"sigmoid", one, [](L x) { return x[0].sigmoid(); }, Compare::Elementwise},
      {"tanh", one, [](L x) { return x[0].tanh(); }, Compare::Elementwise},
      {"pow scalar", one_positive, [](L x) { return x[0].pow(2.5); }, Compare::Elementwise},
      // ---- binary elementwise, same shape and broadcast
      {"add alpha", two, [](L x) { return ember::add(x[0], x[1], 2.0); }, Compare::Exact},
      {"sub broadcast", two_broadcast, [](L x) { return x[0] - x[1]; }, Compare::Exact},
      {"mul", two, [](L x) { return x[0] * x[1]; }, Compare::Exact},
      {"div broadcast", [](std::int64_t n) { return std::vector<InputSpec>{{{n, 3}}, {{3}, Domain::Positive}}; },
       [](L x) { return x[0] / x[1]; }, Compare::Elementwise},
      {"pow tensor", [](std::int64_t n) { return std::vector<InputSpec>{{{n, 3}, Domain::Positive}, {{n, 3}}}; },
       [](L x) { return x[0].pow(x[1]); }, Compare::Elementwise},
      {"maximum", two_broadcast, [](L x) { return ember::maximum(x[0], x[1]); }, Compare::Exact},
      {"minimum", two, [](L x) { return ember::minimum(x[0], x[1]); }, Compare::Exact},
      {"eq/ne/lt/le/gt/ge", two_broadcast,
       [](L x) {
         return ember::stack({x[0].eq(x[1]), x[0].ne(x[1]), x[0].lt(x[1]), x[0].le(x[1]), x[0].gt(x[1]),
                              x[0].ge(x[1])}, 0);
       },
       Compare::Exact},
      {"logical_and", two, [](L x) { return ember::logical_and(x[0] > 0.0, x[1] > 0.0); }, Compare::Exact},
      {"where", two_broadcast, [](L x) { return ember::where(x[0] > 0.0, x[0], x[1]); }, Compare::Exact},
      // ---- casts, strided copies, fills
      {"to float64", one, [](L x) { return x[0].to(kFloat64); }, Compare::Exact},
      {"to int32", one, [](L x) { return (x[0] * 10.0).to(kInt32); }, Compare::Exact},
      {"to bool", one, [](L x) { return (x[0] * 2.0).to(kInt64).to(kBool); }, Compare::Exact},
      {"contiguous of a transpose", one, [](L x) { return x[0].t().contiguous(); }, Compare::Exact},
      {"clone", one, [](L x) { return x[0].clone(); }, Compare::Exact},
      {"fill_", one, [](L x) { return x[0].clone().fill_(0.25); }, Compare::Exact},
      // ---- reductions
      {"sum all", one, [](L x) { return x[0].sum(); }, Compare::Accumulated},
      {"sum dim 0", one, [](L x) { return x[0].sum({0}); }, Compare::Accumulated},
      {"sum dim 1", row, [](L x) { return x[0].sum({1}); }, Compare::Accumulated},
      {"mean", row, [](L x) { return x[0].mean({1}, true); }, Compare::Accumulated},
      {"prod", [](std::int64_t n) { return std::vector<InputSpec>{{{3, n}, Domain::NearOne}}; },
       [](L x) { return x[0].prod(1); }, Compare::Accumulated},
      {"amax", row, [](L x) { return x[0].amax({1}); }, Compare::Exact},
      {"amin", one, [](L x) { return x[0].amin({0}); }, Compare::Exact},
      {"max all", one, [](L x) { return x[0].max(); }, Compare::Exact},
      {"max dim values", row, [](L x) { return std::get<0>(x[0].max(1)); }, Compare::Exact},
      {"min dim indices", one, [](L x) { return std::get<1>(x[0].min(0)); }, Compare::Exact},
      {"argmax", row, [](L x) { return x[0].argmax(1); }, Compare::Exact},
      {"argmin all", one, [](L x) { return x[0].argmin(); }, Compare::Exact},
      {"softmax", row, [](L x) { return x[0].softmax(1); }, Compare::Normalised},
      {"log_softmax dim 0", one, [](L x) { return x[0].log_softmax(0); }, Compare::Normalised},
      // ---- GEMM: ember's kernel (the default backend), plain, transposed, batched, bias epilogue
      {"mm", [](std::int64_t n) { return std::vector<InputSpec>{{{n, 33}}, {{33, 31}}}; },
       [](L x) { return x[0].mm(x[1]); }, Compare::Accumulated},
      {"mm transposed operands", [](std::int64_t n) { return std::vector<InputSpec>{{{33, n}}, {{7, 33}}}; },
       [](L x) { return x[0].t().mm(x[1].t()); }, Compare::Accumulated},
      {"bmm", [](std::int64_t n) { return std::vector<InputSpec>{{{3, n, 9}}, {{3, 9, 5}}}; },
       [](L x) { return ember::bmm(x[0], x[1]); }, Compare::Accumulated},
      {"addmm", [](std::int64_t n) { return std::vector<InputSpec>{{{7}}, {{n, 31}}, {{31, 7}}}; },
       [](L x) { return ember::addmm(x[0], x[1], x[2], 0.5, 2.0); }, Compare::Accumulated},
      {"matmul mv", [](std::int64_t n) { return std::vector<InputSpec>{{{n, 31}}, {{31}}}; },
       [](L x) { return x[0].matmul(x[1]); }, Compare::Accumulated},
      // ---- indexing
      {"index_select", [](std::int64_t n) { return std::vector<InputSpec>{{{n, 3}}, {{5}, Domain::Index, n}}; },
       [](L x) { return x[0].index_select(0, x[1]); }, Compare::Exact},
      {"gather", [](std::int64_t n) { return std::vector<InputSpec>{{{n, 3}}, {{n, 2}, Domain::Index, 3}}; },
       [](L x) { return x[0].gather(1, x[1]); }, Compare::Exact},
      {"index_add", [](std::int64_t n) {
         return std::vector<InputSpec>{{{n, 3}}, {{9}, Domain::Index, n}, {{9, 3}}};
       },
       [](L x) { return ember::index_add(x[0], 0, x[1], x[2]); }, Compare::Accumulated},
      {"scatter_add", [](std::int64_t n) {
         return std::vector<InputSpec>{{{n, 3}}, {{n, 2}, Domain::Index, 3}, {{n, 2}}};
       },
       [](L x) { return ember::scatter_add(x[0], 1, x[1], x[2]); }, Compare::Accumulated},
      {"one_hot", [](std::int64_t n) { return std::vector<InputSpec>{{{n}, Domain::Index, 5}}; },
       [](L x) { return ember::one_hot(x[0], 5); }, Compare::Exact},
      {"cat", [](std::int64_t n) { return std::vector<InputSpec>{{{n, 3}}, {{n, 2}}}; },
       [](L x) { return ember::cat({x[0], x[1]}, 1); }, Compare::Exact},
      {"stack", two, [](L x) { return ember::stack({x[0], x[1]}, 0); }, Compare::Exact},
      // ---- losses (fused forward on the GPU where the backend has it)
      {"cross_entropy", [](std::int64_t n) { return std::vector<InputSpec>{{{n, 5}}, {{n}, Domain::Index, 5}}; },
       [](L x) { return ember::cross_entropy(x[0], x[1]); }, Compare::Normalised},
      {"nll_loss", [](std::int64_t n) { return std::vector<InputSpec>{{{n, 5}}, {{n}, Domain::Index, 5}}; },
       [](L x) { return ember::nll_loss(x[0].log_softmax(1), x[1], Reduction::Sum); }, Compare::Normalised},
      {"mse_loss", two, [](L x) { return ember::mse_loss(x[0], x[1]); }, Compare::Normalised},
      {"binary_cross_entropy",
       [](std::int64_t n) { return std::vector<InputSpec>{{{n, 3}, Domain::Probability}, {{n, 3}, Domain::Probability}}; },
       [](L x) { return ember::binary_cross_entropy(x[0], x[1]); }, Compare::Normalised},
      {"binary_cross_entropy_with_logits", [](std::int64_t n) {
         return std::vector<InputSpec>{{{n, 3}}, {{n, 3}, Domain::Probability}};
       },
       [](L x) { return ember::binary_cross_entropy_with_logits(x[0], x[1]); }, Compare::Normalised},
  };
}

// The inputs on one device/dtype, as views of the bases moved there.
TensorList inputs_for(const std::vector<Tensor>& bases, bool non_contiguous, Device device, bool float64) {
  TensorList inputs;
  for (const Tensor& base : bases) {
    Tensor moved = base.to(device);
    if (float64 && moved.is_floating_point()) moved = moved.to(kFloat64);
    inputs.push_back(view_of(moved, non_contiguous));
  }
  return inputs;
}

Tensor abs_inputs_result(const OpRow& op, const std::vector<Tensor>& bases, bool non_contiguous) {
  TensorList inputs = inputs_for(bases, non_contiguous, kCPU, true);
  for (Tensor& x : inputs)
    if (x.is_floating_point()) x = x.abs();
  return op.fn(inputs).abs();
}

}  // namespace

TEST_CASE("cuda ops vs cpu: every op's CUDA result equals the CPU result on odd sizes and strides",
          "[cuda][gpu][ops]") {
  EMBER_REQUIRE_GPU();
  const Device gpu("cuda:0");
  for (const OpRow& op : rows()) {
    for (std::int64_t n : {1, 7, 31, 1000, 4097}) {
      for (bool non_contiguous : {false, true}) {
        INFO(op.name << ", n = " << n << (non_contiguous ? ", non-contiguous" : ", contiguous"));
        std::vector<Tensor> bases;
        unsigned seed = 1;
        for (const InputSpec& spec : op.inputs(n)) bases.push_back(make_base(spec, non_contiguous, seed++));
        TensorList gpu_inputs = inputs_for(bases, non_contiguous, gpu, false);
        for (const Tensor& x : gpu_inputs) REQUIRE(x.is_cuda());
        const Tensor got = op.fn(gpu_inputs);
        REQUIRE(got.is_cuda());
        const Tensor cpu = op.fn(inputs_for(bases, non_contiguous, kCPU, false));
        const Tensor host = got.cpu();
        REQUIRE(host.sizes() == cpu.sizes());
        REQUIRE(host.dtype() == cpu.dtype());
        switch (op.compare) {
          case Compare::Exact: REQUIRE(host.equal(cpu)); break;
          case Compare::Elementwise: REQUIRE(host.allclose(cpu, 1e-6, 1e-7)); break;
          case Compare::Accumulated: {
            const Tensor reference = op.fn(inputs_for(bases, non_contiguous, kCPU, true));
            const Tensor scale = reference.abs() + abs_inputs_result(op, bases, non_contiguous);
            const Tensor error = (host.to(kFloat64) - reference).abs();
            REQUIRE((error - (scale * 1e-5 + 1e-7)).max().item<double>() <= 0.0);
            break;
          }
          case Compare::Normalised: {
            const Tensor reference = op.fn(inputs_for(bases, non_contiguous, kCPU, true));
            REQUIRE(host.to(kFloat64).allclose(reference, 1e-5, 1e-7));
            break;
          }
        }
      }
    }
  }
}

TEST_CASE("cuda ops vs cpu: GEMM through cuBLAS matches ember's kernel and the CPU", "[cuda][gpu][ops][gemm]") {
  EMBER_REQUIRE_GPU();
  for (std::int64_t n : {1, 7, 31, 1000, 4097}) {
    INFO("n = " << n);
    Tensor a = ember::randn({n, 33}), b = ember::randn({33, 31});
    Tensor reference = a.to(kFloat64).mm(b.to(kFloat64));
    const Tensor scale = a.to(kFloat64).abs().mm(b.to(kFloat64).abs());
    for (auto backend : {cuda::MatmulBackend::Ember, cuda::MatmulBackend::Cublas}) {
      cuda::set_matmul_backend(backend);
      Tensor got = a.cuda().mm(b.cuda()).cpu().to(kFloat64);
      REQUIRE(((got - reference).abs() - (scale * 1e-5 + 1e-7)).max().item<double>() <= 0.0);
    }
  }
  cuda::set_matmul_backend(cuda::MatmulBackend::Ember);
}

TEST_CASE("cuda ops vs cpu: mm_transposed writes its result in the layout asked for on every backend",
          "[cuda][gpu][ops][gemm]") {
  EMBER_REQUIRE_GPU();
  // Autograd's weight gradients (native::mm_transposed): op(a)·op(b) from the stored matrices,
  // the result row-major or column-major (strides (1, m)). 300 x 260 outputs reach the fast
  // kernel's tile count; the small product stays on the reading kernel.
  for (auto [m, k, n] : {std::array<std::int64_t, 3>{37, 19, 23}, std::array<std::int64_t, 3>{300, 45, 260}}) {
    for (bool transpose_a : {false, true})
      for (bool transpose_b : {false, true})
        for (bool transposed_result : {false, true}) {
          const Tensor a = transpose_a ? ember::randn({k, m}) : ember::randn({m, k});
          const Tensor b = transpose_b ? ember::randn({n, k}) : ember::randn({k, n});
          const Tensor a64 = (transpose_a ? a.t() : a).to(kFloat64), b64 = (transpose_b ? b.t() : b).to(kFloat64);
          const Tensor reference = a64.mm(b64), scale = a64.abs().mm(b64.abs());
          for (auto backend : {cuda::MatmulBackend::Ember, cuda::MatmulBackend::EmberSimple, cuda::MatmulBackend::Cublas}) {
            INFO("m " << m << " transpose_a " << transpose_a << " transpose_b " << transpose_b << " transposed_result "
                      << transposed_result << " backend " << int(backend));
            cuda::set_matmul_backend(backend);
            const Tensor result = native::mm_transposed(a.cuda(), transpose_a, b.cuda(), transpose_b, transposed_result);
            REQUIRE(result.sizes() == Shape{m, n});
            REQUIRE(result.strides() == (transposed_result ? Shape{1, m} : Shape{n, 1}));
            const Tensor got = result.cpu().to(kFloat64);
            REQUIRE(((got - reference).abs() - (scale * 1e-5 + 1e-7)).max().item<double>() <= 0.0);
          }
        }
  }
  cuda::set_matmul_backend(cuda::MatmulBackend::Ember);
}

TEST_CASE("cuda ops vs cpu: the fast 128x128 GEMM matches the reading kernel, cuBLAS and the CPU",
          "[cuda][gpu][ops][gemm]") {
  EMBER_REQUIRE_GPU();
  // 2050 × 1030 outputs: 17 × 9 = 153 tiles of 128 × 128 (the fast kernel's threshold is
  // 128), with part tiles on both edges; B transposed and a sliced A cover the load modes.
  Tensor a = ember::randn({2050, 70}), b = ember::randn({1030, 70}).t();
  Tensor sliced = ember::randn({2050, 75}).narrow(1, 1, 70);  // misaligned: scalar loads
  for (const Tensor& left : {a, sliced}) {
    Tensor reference = left.to(kFloat64).mm(b.to(kFloat64));
    const Tensor scale = left.to(kFloat64).abs().mm(b.to(kFloat64).abs());
    for (auto backend : {cuda::MatmulBackend::Ember, cuda::MatmulBackend::EmberSimple, cuda::MatmulBackend::Cublas}) {
      INFO("backend " << int(backend));
      cuda::set_matmul_backend(backend);
      Tensor got = left.cuda().mm(b.cuda()).cpu().to(kFloat64);
      REQUIRE(((got - reference).abs() - (scale * 1e-5 + 1e-7)).max().item<double>() <= 0.0);
    }
  }
  cuda::set_matmul_backend(cuda::MatmulBackend::Ember);
}

TEST_CASE("cuda ops vs cpu: bfloat16 and float16 products run on the tensor cores and match the exact product",
          "[cuda][gpu][ops][gemm][reduced_float]") {
  EMBER_REQUIRE_GPU();
  // mm, addmm (linear with a bias) and bmm, transposed and sliced operands: the tensor-core
  // kernel (cuda/kernels/gemm_tensor_core.cuh) on sm_80 and later, within one unit of the
  // format (its one rounding) plus float32's summation error of the exact float64 product of
  // the same 16-bit values.
  for (DType dtype : {kBFloat16, kFloat16}) {
    INFO(dtype_name(dtype));
    const double unit = dtype == kBFloat16 ? std::ldexp(1.0, -7) : std::ldexp(1.0, -10);
    auto check = [&](const Tensor& got16, const Tensor& exact, const Tensor& scale) {
      REQUIRE(got16.dtype() == dtype);
      const Tensor got = got16.cpu().to(kFloat64);
      REQUIRE(((got - exact).abs() - (exact.abs() * unit + scale * 1e-5 + 1e-7)).max().item<double>() <= 0.0);
    };
    const Tensor a = ember::randn({130, 70}).to(dtype), b = ember::randn({70, 33}).to(dtype);
    const Tensor bias = ember::randn({33}).to(dtype);
    const Tensor a64 = a.to(kFloat64), b64 = b.to(kFloat64);
    const Tensor scale = a64.abs().mm(b64.abs());
    check(a.cuda().mm(b.cuda()), a64.mm(b64), scale);
    check(a.t().contiguous().cuda().t().mm(b.cuda()), a64.mm(b64), scale);  // A transposed in memory
    check(ember::addmm(bias.cuda(), a.cuda(), b.cuda()), a64.mm(b64) + bias.to(kFloat64), scale + bias.to(kFloat64).abs());
    const Tensor x = ember::randn({3, 17, 40}).to(dtype), y = ember::randn({3, 40, 9}).to(dtype);
    check(ember::bmm(x.cuda(), y.cuda()), ember::bmm(x.to(kFloat64), y.to(kFloat64)),
          ember::bmm(x.to(kFloat64).abs(), y.to(kFloat64).abs()));
  }
}
