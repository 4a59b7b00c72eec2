// tests/core/test_fused_ops.cpp — the native fused ops (core/fused.cpp, core/cpu/fused_kernels.cpp):
// relu_backward against PyTorch's threshold_backward and against the composite
// gt + mul; cross_entropy_rows against the composite log_softmax + gather (losses bit for
// bit, threads included); one_hot through the backend against F.one_hot; sgd_step_'s
// checks; foreach_norm against long-double norms and the reference loop; every error message
// (tests/reference/fused.json, from gen_fused.py).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include <ember/core/factories.h>
#include <ember/core/fused_plans.h>
#include <ember/core/kernel_mode.h>
#include <ember/core/native.h>
#include <ember/core/random.h>

#include "test_support.h"

namespace {

using namespace ember;
using nlohmann::json;
using testing::load_reference;
using testing::tensor_from_json;
using testing::to_vector;

// Equal values, NaN equal to NaN (relu_backward is a select: no rounding at all).
void require_same_values(const Tensor& actual, const Tensor& expected) {
  REQUIRE(actual.sizes() == expected.sizes());
  REQUIRE(actual.dtype() == expected.dtype());
  const auto a = to_vector(actual), b = to_vector(expected);
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO("element " << i << ": " << a[i] << " vs " << b[i]);
    REQUIRE((a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i]))));
  }
}

// Deterministic values spread over [-3, 3] for any shape and dtype.
Tensor spread(const Shape& sizes, DType dtype, double phase) {
  Tensor values = empty(sizes, TensorOptions().dtype(kFloat64));
  double* data = values.data_ptr<double>();
  for (std::int64_t i = 0; i < values.numel(); ++i) data[i] = 3.0 * std::sin(0.37 * static_cast<double>(i) + phase);
  return native::to_dtype(values, dtype);
}

// Targets for `rows` rows over `classes` classes; every third row ignored (-100).
Tensor targets_for(std::int64_t rows, std::int64_t classes) {
  Tensor t = empty({rows}, TensorOptions().dtype(kInt64));
  for (std::int64_t r = 0; r < rows; ++r) t.data_ptr<std::int64_t>()[r] = r % 3 == 1 ? -100 : (r * 7) % classes;
  return t;
}

}  // namespace

TEST_CASE("relu_backward matches PyTorch's threshold_backward", "[fused][relu]") {
  const json reference = load_reference("fused.json");  // outlives the loop
  for (const json& c : reference["relu_backward"]) {
    INFO(c["name"].get<std::string>());
    Tensor grad = tensor_from_json(c["grad"]), result = tensor_from_json(c["result"]);
    if (c["transpose_grad"].get<bool>()) grad = native::t(grad);
    if (c["transpose_result"].get<bool>()) result = native::t(result);
    require_same_values(native::relu_backward(grad, result), tensor_from_json(c["expected"]));
  }
}

TEST_CASE("relu_backward equals the composite grad * (result > 0) on finite values", "[fused][relu]") {
  for (DType dtype : {kFloat32, kFloat64}) {
    for (std::int64_t n : {1, 7, 33, 1000, 100003}) {  // the last one runs on several threads
      INFO(dtype_name(dtype) << " n " << n);
      Tensor grad = spread({n}, dtype, 0.1), result = native::relu(spread({n}, dtype, 1.3));
      Tensor composite = native::mul(grad, native::to_dtype(native::gt(result, scalar_to_tensor(0.0)), dtype));
      REQUIRE(native::equal(native::relu_backward(grad, result), composite));
    }
    // Strided: every other column of a wider buffer, and a transposed gradient.
    Tensor wide = spread({5, 14}, dtype, 0.4);
    Tensor result = native::relu(native::slice(wide, 1, 0, std::nullopt, 2));
    Tensor grad = native::t(spread({7, 5}, dtype, 2.0));
    Tensor composite = native::mul(grad, native::to_dtype(native::gt(result, scalar_to_tensor(0.0)), dtype));
    REQUIRE(native::equal(native::relu_backward(grad, result), composite));
  }
}

TEST_CASE("relu_backward reports PyTorch's errors", "[fused][relu]") {
  const json errors = load_reference("fused.json")["relu_backward_errors"];
  REQUIRE_THROWS_WITH(native::relu_backward(ones({3}), ones({2})), errors["shape"].get<std::string>());
  REQUIRE_THROWS_AS(native::relu_backward(ones({3}), ones({2})), ShapeError);
  Tensor flags = ones({3}, TensorOptions().dtype(kBool));
  REQUIRE_THROWS_WITH(native::relu_backward(flags, flags), errors["bool"].get<std::string>());
  REQUIRE_THROWS_AS(native::relu_backward(flags, flags), DTypeError);
}

TEST_CASE("cross_entropy_rows: losses equal log_softmax + gather bit for bit, the gradient is softmax - one_hot",
          "[fused][cross_entropy]") {
  for (DType dtype : {kFloat32, kFloat64}) {
    for (std::int64_t rows : {1, 7, 33, 120}) {
      for (std::int64_t classes : {1, 7, 1000}) {  // 120 x 1000 is split across threads
        INFO(dtype_name(dtype) << " rows " << rows << " classes " << classes);
        Tensor logits = spread({rows, classes}, dtype, 0.25 * static_cast<double>(rows));
        Tensor target = targets_for(rows, classes);
        auto fused = native::cross_entropy_rows(logits, target, -100, /*with_grad=*/true, /*mean_over_kept=*/true);
        Tensor log_probabilities = native::log_softmax(logits, 1);
        const double kept = static_cast<double>(fused.kept_rows);
        REQUIRE(fused.kept_rows == rows - (rows + 1) / 3);
        for (std::int64_t r = 0; r < rows; ++r) {
          const std::int64_t t = target.data_ptr<std::int64_t>()[r];
          const double loss = native::select(fused.losses, 0, r).item<double>();
          if (t == -100) {
            REQUIRE(loss == 0.0);
            REQUIRE(native::equal(native::select(fused.grad_logits, 0, r), zeros({classes}, TensorOptions().dtype(dtype))));
            continue;
          }
          // The composite's value, negated: exactly what nll_loss(log_softmax(x)) computes.
          REQUIRE(loss == -native::select(native::select(log_probabilities, 0, r), 0, t).item<double>());
          for (std::int64_t c = 0; c < classes; c += std::max<std::int64_t>(1, classes / 50)) {
            const double p = std::exp(native::select(native::select(log_probabilities, 0, r), 0, c).item<double>());
            const double want = (p - (c == t ? 1.0 : 0.0)) / kept;
            const double got = native::select(native::select(fused.grad_logits, 0, r), 0, c).item<double>();
            REQUIRE(got == Approx(want).margin(1e-7).epsilon(1e-5));
          }
        }
      }
    }
  }
}

TEST_CASE("cross_entropy_rows: forward only, non-contiguous logits, empty batch, huge logits", "[fused][cross_entropy]") {
  Tensor logits = native::t(spread({6, 4}, kFloat32, 0.0));  // [4, 6], transposed
  Tensor target = tensor({5, 0, 3, 1});
  auto with_grad = native::cross_entropy_rows(logits, target, -100, true, false);
  auto forward_only = native::cross_entropy_rows(logits, target, -100, false, false);
  REQUIRE_FALSE(forward_only.grad_logits.defined());
  REQUIRE(native::equal(with_grad.losses, forward_only.losses));
  REQUIRE(native::equal(with_grad.losses, native::cross_entropy_rows(native::contiguous(logits), target, -100, false,
                                                                     false).losses));
  auto empty_batch = native::cross_entropy_rows(zeros({0, 5}), empty({0}, TensorOptions().dtype(kInt64)), -100, true, true);
  REQUIRE(empty_batch.losses.sizes() == Shape{0});
  REQUIRE(empty_batch.grad_logits.sizes() == Shape{0, 5});
  REQUIRE(empty_batch.kept_rows == 0);
  auto huge = native::cross_entropy_rows(tensor({{1000.0, -1000.0, 0.0}, {-1000.0, 1000.0, 1000.0}}), tensor({0, 2}), -100,
                                         true, false);
  REQUIRE(to_vector(huge.losses) == std::vector<double>{0.0, static_cast<double>(static_cast<float>(std::log(2.0)))});
  REQUIRE(std::isfinite(native::sum(huge.grad_logits, {}, false).item<double>()));
}

TEST_CASE("cross_entropy_rows reports nll_loss's errors", "[fused][cross_entropy]") {
  const json errors = load_reference("fused.json")["cross_entropy_errors"];
  Tensor logits = zeros({3, 4});
  REQUIRE_THROWS_WITH(native::cross_entropy_rows(logits, tensor({1, 7, 0}), -100, true, true),
                      errors["out of bounds"].get<std::string>());
  REQUIRE_THROWS_AS(native::cross_entropy_rows(logits, tensor({1, 7, 0}), -100, true, true), IndexError);
  REQUIRE_THROWS_WITH(native::cross_entropy_rows(logits, tensor({1, -3, 0}), -100, true, true),
                      errors["negative target"].get<std::string>());
  REQUIRE_THROWS_WITH(native::cross_entropy_rows(logits, native::to_dtype(tensor({1, 2, 0}), kInt32), -100, true, true),
                      errors["int32 target"].get<std::string>());
  REQUIRE_THROWS_AS(native::cross_entropy_rows(logits, native::to_dtype(tensor({1, 2, 0}), kInt32), -100, true, true),
                    DTypeError);
  REQUIRE_THROWS_WITH(native::cross_entropy_rows(logits, tensor({1, 2}), -100, true, true),
                      errors["batch mismatch"].get<std::string>());
  REQUIRE_THROWS_AS(native::cross_entropy_rows(logits, tensor({1, 2}), -100, true, true), ShapeError);
  REQUIRE_THROWS_WITH(native::cross_entropy_rows(tensor({1, 2, 0}), tensor({1, 2, 0}), -100, true, true),
                      "cross_entropy_rows: expected 2-D logits [rows, classes], got 1-D");
  REQUIRE_THROWS_WITH(native::cross_entropy_rows(tensor({{1, 2}}), tensor({1}), -100, true, true),
                      "\"log_softmax_lastdim_kernel_impl\" not implemented for 'Long'");
}

TEST_CASE("one_hot is written by the backend and matches F.one_hot", "[fused][one_hot]") {
  const json reference = load_reference("fused.json");  // outlives the loop
  for (const json& c : reference["one_hot"]) {
    INFO(c["name"].get<std::string>());
    Tensor index = tensor_from_json(c["index"]);
    if (c["transpose"].get<bool>()) index = native::t(index);
    Tensor out = native::one_hot(index, c["num_classes"].get<std::int64_t>());
    REQUIRE(out.is_contiguous());
    require_same_values(out, tensor_from_json(c["expected"]));
  }
  // Many rows: the row loop is split across threads.
  Tensor index = empty({50001}, TensorOptions().dtype(kInt64));
  for (std::int64_t i = 0; i < index.numel(); ++i) index.data_ptr<std::int64_t>()[i] = (i * 5) % 7;
  Tensor out = native::one_hot(index, 7);
  REQUIRE(native::sum(out, {}, false).item<std::int64_t>() == 50001);
  const std::int64_t* data = out.data_ptr<std::int64_t>();
  for (std::int64_t i = 0; i < index.numel(); i += 977) REQUIRE(data[i * 7 + (i * 5) % 7] == 1);
}

TEST_CASE("sgd_step_ updates in place, bumps versions and checks its arguments", "[fused][sgd]") {
  Tensor param = tensor({1.0, 2.0, 3.0}), grad = tensor({0.5, -1.0, 2.0});
  Tensor buffer = empty({3});
  const optim::SGDOptions options{.lr = 0.1, .momentum = 0.9};  // the optimizer's own object (core/sgd_options.h)
  const auto param_version = param.version(), buffer_version = buffer.version();
  native::sgd_step_(param, grad, buffer, options, /*first_step=*/true);
  REQUIRE(to_vector(buffer) == to_vector(grad));  // the first step's buffer is the direction itself
  REQUIRE(to_vector(param) == std::vector<double>{static_cast<float>(1.0f - 0.1f * 0.5f),
                                                  static_cast<float>(2.0f + 0.1f * 1.0f),
                                                  static_cast<float>(3.0f - 0.1f * 2.0f)});
  REQUIRE(param.version() > param_version);
  REQUIRE(buffer.version() > buffer_version);

  REQUIRE_THROWS_WITH(native::sgd_step_(native::t(zeros({2, 3})), zeros({3, 2}), Tensor(), {}),
                      "sgd_step_: the parameter must be contiguous");
  REQUIRE_THROWS_WITH(native::sgd_step_(zeros({3}), zeros({2}), Tensor(), {}),
                      "sgd_step_: the gradient's shape [2] does not match the parameter's [3]");
  REQUIRE_THROWS_AS(native::sgd_step_(zeros({3}), zeros({2}), Tensor(), {}), ShapeError);
  REQUIRE_THROWS_WITH(native::sgd_step_(zeros({3}), zeros({3}), Tensor(), options),
                      "sgd_step_: momentum needs a momentum buffer");
  REQUIRE_THROWS_WITH(native::sgd_step_(zeros({3}), zeros({3}), zeros({3}, TensorOptions().dtype(kFloat64)), options),
                      "sgd_step_: the momentum buffer must be a contiguous tensor of the parameter's shape and dtype");
  REQUIRE_THROWS_WITH(native::sgd_step_(tensor({1, 2}), tensor({1, 2}), Tensor(), {}),
                      "sgd_step_: expected a floating point parameter, got Long");
}

// Issue 18, item 5: the fused SGD step's plan carries the optimizer's own hyper-parameter
// object (core/sgd_options.h), not a copy of its fields; the kernel reads what it was given.
TEST_CASE("SgdPlan embeds optim::SGDOptions, plain data a kernel can take by value", "[fused][sgd]") {
  static_assert(std::is_same_v<decltype(SgdPlan::options), optim::SGDOptions>);
  static_assert(std::is_trivially_copyable_v<optim::SGDOptions> && std::is_trivially_copyable_v<SgdPlan>);
  // PyTorch's defaults (torch.optim.SGD): lr 1e-3, no momentum, dampening or decay.
  const optim::SGDOptions defaults;
  CHECK(defaults.lr == 1e-3);
  CHECK(defaults.momentum == 0.0);
  CHECK(defaults.dampening == 0.0);
  CHECK(defaults.weight_decay == 0.0);
  CHECK_FALSE(defaults.nesterov);
  CHECK_FALSE(defaults.maximize);
  // Every field of the object reaches the update: maximize and weight decay flip and shift it.
  Tensor param = tensor({1.0, -2.0}), grad = tensor({0.5, 0.25});
  native::sgd_step_(param, grad, Tensor(), {.lr = 0.5, .weight_decay = 0.1, .maximize = true});
  // p - lr * (-g + wd * p): 1 - 0.5 * (-0.5 + 0.1) and -2 - 0.5 * (-0.25 - 0.2).
  const std::vector<double> updated = to_vector(param);
  CHECK(updated[0] == Approx(1.2).epsilon(1e-6));
  CHECK(updated[1] == Approx(-1.775).epsilon(1e-6));
}

// ------------------------------------------------------------------ foreach_norm (issue 20)

namespace {

// The p-norm of `x` from its values in long double, element by element: the yardstick.
double exact_norm(const Tensor& x, double p) {
  long double total = 0;
  for (double v : to_vector(x)) {
    const long double magnitude = std::fabs(static_cast<long double>(v));
    if (std::isnan(v)) return std::nan("");
    if (std::isinf(p)) total = std::max(total, magnitude);
    else total += std::pow(magnitude, static_cast<long double>(p));
  }
  if (std::isinf(p) || p == 1.0) return static_cast<double>(total);
  return static_cast<double>(std::pow(total, 1.0L / static_cast<long double>(p)));
}

}  // namespace

TEST_CASE("foreach_norm: each tensor's p-norm in one call, every p, dtype and layout", "[fused][foreach_norm]") {
  const double inf = std::numeric_limits<double>::infinity();
  for (DType dtype : {kFloat32, kFloat64}) {
    // A vector, a matrix, a transposed (non-contiguous) view, an empty tensor, one longer than
    // the CPU kernel's 32768-element blocks, and a 0-d one.
    const std::vector<Tensor> tensors{spread({7}, dtype, 0.1), spread({30, 40}, dtype, 0.2),
                                      spread({40, 30}, dtype, 0.3).t(), empty({0, 3}, TensorOptions().dtype(dtype)),
                                      spread({70001}, dtype, 0.4), spread({}, dtype, 0.5)};
    for (double p : {1.0, 2.0, 3.0, 0.5, inf}) {
      INFO("dtype " << scalar_type_name(dtype) << " p " << p);
      const Tensor norms = native::foreach_norm(tensors, p);
      REQUIRE(norms.sizes() == Shape{static_cast<std::int64_t>(tensors.size())});
      REQUIRE(norms.dtype() == dtype);
      const std::vector<double> got = to_vector(norms);
      const double rtol = dtype == kFloat64 ? 1e-13 : 1e-6;
      for (std::size_t i = 0; i < tensors.size(); ++i) {
        INFO("tensor " << i);
        const double want = exact_norm(tensors[i], p);
        REQUIRE(std::abs(got[i] - want) <= rtol * std::abs(want));
      }
      REQUIRE(got[3] == 0.0);  // the empty tensor
    }
  }
}

TEST_CASE("foreach_norm: NaN and inf elements, lists longer than one call's 48 tensors", "[fused][foreach_norm]") {
  const double inf = std::numeric_limits<double>::infinity();
  const Tensor with_nan = tensor({1.0, std::nan(""), -3.0}), with_inf = tensor({1.0, -inf, 2.0});
  for (double p : {1.0, 2.0, inf}) {
    const std::vector<double> got = to_vector(native::foreach_norm({with_nan, with_inf}, p));
    CHECK(std::isnan(got[0]));
    CHECK(got[1] == inf);
  }
  // 100 tensors: three calls of at most 48, each norm in its place.
  std::vector<Tensor> many;
  for (int i = 0; i < 100; ++i) many.push_back(full({i + 1}, static_cast<double>(i)));
  const std::vector<double> norms = to_vector(native::foreach_norm(many, 1.0));
  for (int i = 0; i < 100; ++i) REQUIRE(norms[i] == static_cast<double>(i) * (i + 1));
}

TEST_CASE("foreach_norm: the fast kernel equals the reference loop", "[fused][foreach_norm][reference]") {
  for (DType dtype : {kFloat32, kFloat64})
    for (double p : {1.0, 2.0, 2.5, std::numeric_limits<double>::infinity()}) {
      const std::vector<Tensor> tensors{spread({100000}, dtype, 0.7), spread({3, 5}, dtype, 0.9)};
      const std::vector<double> fast = to_vector(native::foreach_norm(tensors, p));
      std::vector<double> plain;
      {
        KernelModeGuard reference(KernelMode::Reference);
        plain = to_vector(native::foreach_norm(tensors, p));
      }
      INFO("dtype " << scalar_type_name(dtype) << " p " << p);
      // Both sum in double; only the order differs (blocks and lanes against one row).
      for (std::size_t i = 0; i < fast.size(); ++i) REQUIRE(fast[i] == Approx(plain[i]).epsilon(1e-12));
    }
}

TEST_CASE("foreach_norm: errors", "[fused][foreach_norm]") {
  REQUIRE_THROWS_WITH(native::foreach_norm({}, 2.0), "foreach_norm: expected at least one tensor");
  REQUIRE_THROWS_WITH(native::foreach_norm({ones({2})}, 0.0), "foreach_norm: the norm's order must be positive, got 0");
  REQUIRE_THROWS_WITH(native::foreach_norm({tensor({1, 2})}, 2.0), "foreach_norm: expected floating tensors, got Long");
  REQUIRE_THROWS_WITH(native::foreach_norm({ones({2}), ones({2}, TensorOptions().dtype(kFloat64))}, 2.0),
                      "foreach_norm: expected every tensor to be Float, got Double");
}
