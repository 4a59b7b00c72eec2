// tests/nn/test_autocast.cpp — AutocastGuard against torch.autocast on the CPU (issue 22).
//
// References: tests/reference/gen_autocast.py (autocast.json): the dtype each op gives
// inside a bfloat16 region, and an MLP (Linear, ReLU, Linear, cross-entropy) run under
// bfloat16 and float16 autocast and without it: the hidden activations and logits in 16
// bits, the loss in float32, float32 gradients for the float32 parameters.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <ember/ember.h>

#include "reduced_float_cases.h"
#include "test_support.h"

using namespace ember;
using nlohmann::json;
namespace F = ember::nn::functional;

namespace {

const json& reference() {
  static const json data = testing::load_reference("autocast.json");
  return data;
}

// Every element of actual within `relative` of expected's (and of the same dtype).
void require_close(const Tensor& actual, const Tensor& expected, double relative, double absolute) {
  REQUIRE(actual.dtype() == expected.dtype());
  REQUIRE(actual.sizes() == expected.sizes());
  const std::vector<double> got = testing::to_vector(actual), want = testing::to_vector(expected);
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", want " << want[i]);
    REQUIRE(std::fabs(got[i] - want[i]) <= absolute + relative * std::fabs(want[i]));
  }
}

struct MlpRun {
  Tensor hidden, logits, loss;
  std::vector<Tensor> params;
};

// The reference MLP from the JSON's parameters, under autocast to `dtype` (none: off).
MlpRun run_mlp(std::optional<DType> dtype) {
  const json& r = reference();
  MlpRun run;
  for (const json& p : r["params"]) run.params.push_back(testing::tensor_from_json(p).requires_grad_(true));
  const Tensor x = testing::tensor_from_json(r["x"]), target = testing::tensor_from_json(r["target"]);
  {
    AutocastGuard autocast(DeviceType::CPU, dtype.value_or(kBFloat16), dtype.has_value());
    run.hidden = ember::relu(F::linear(x, run.params[0], run.params[1]));
    run.logits = F::linear(run.hidden, run.params[2], run.params[3]);
    run.loss = ember::cross_entropy(run.logits, target);
  }
  run.loss.backward();
  return run;
}

// The node that cast the weight of F::linear(x, weight) without a bias: MmBackward0's
// second input is TBackward0 (weight.t()), whose input is the cast.
std::shared_ptr<autograd::Node> weight_cast_node(const Tensor& output) {
  const auto mm_node = std::static_pointer_cast<autograd::Node>(output.grad_fn());
  REQUIRE(mm_node->name() == "MmBackward0");
  const auto transpose_node = mm_node->next_edges()[1].node;
  REQUIRE(transpose_node->name() == "TBackward0");
  return transpose_node->next_edges()[0].node;
}

}  // namespace

TEST_CASE("autocast: each op computes in PyTorch's dtype inside a bfloat16 region", "[autocast]") {
  manual_seed(1);
  const Tensor a = ember::randn({4, 5}), b = ember::randn({5, 5});
  const Tensor labels = ember::tensor({0, 1, 2, 3});
  AutocastGuard autocast(DeviceType::CPU, kBFloat16);
  const Tensor low = ember::matmul(a, b);
  const std::map<std::string, DType> got = {
      {"mm", ember::mm(a, b).dtype()},
      {"matmul", low.dtype()},
      {"bmm", ember::bmm(a.unsqueeze(0), b.unsqueeze(0)).dtype()},
      {"addmm", ember::addmm(ember::zeros({5}), a, b).dtype()},
      {"linear", F::linear(a, b).dtype()},
      {"matmul_float64", ember::matmul(a.to(kFloat64), b.to(kFloat64)).dtype()},
      {"relu_of_low", ember::relu(low).dtype()},
      {"softmax_of_low", ember::softmax(low, 1).dtype()},
      {"sum_of_low", low.sum().dtype()},
      {"add_low_and_float32", (low + a).dtype()},
      {"cross_entropy_of_low", ember::cross_entropy(low, labels).dtype()},
      {"mse_loss_of_low", ember::mse_loss(low, low).dtype()},
      {"prod_of_low", ember::prod(low).dtype()},
      {"nll_loss_of_low", ember::nll_loss(low, labels).dtype()},
  };
  for (const auto& [op, dtype] : got) {
    INFO(op);
    CHECK(dtype_name(dtype) == reference()["op_dtypes"][op].get<std::string>());
  }
}

TEST_CASE("autocast: an MLP's forward and backward match torch.autocast's", "[autocast]") {
  for (const json& expected : reference()["runs"]) {
    const std::string name = expected["autocast"];
    INFO("autocast " << name);
    const std::optional<DType> dtype =
        name == "float32" ? std::nullopt : std::optional<DType>(testing::dtype_from_name(name));
    const MlpRun run = run_mlp(dtype);
    // PyTorch's 16-bit GEMM (oneDNN) and ember's (float32, rounded once) add in different
    // orders, so a 16-bit result may differ by a unit in its last place: the hidden values
    // within one unit, the logits and everything after within a few of the 16-bit format.
    const double unit = name == "bfloat16" ? 1.0 / 128 : name == "float16" ? 1.0 / 1024 : 1e-6;
    testing::require_matches(run.hidden, testing::tensor_from_json(expected["hidden"]), name == "float32" ? 0.0 : 1.0);
    require_close(run.logits, testing::tensor_from_json(expected["logits"]), 2 * unit, 2 * unit);
    require_close(run.loss, testing::tensor_from_json(expected["loss"]), unit, 0.0);
    CHECK(run.loss.grad_fn()->name() == expected["loss_grad_fn"].get<std::string>());
    CHECK(run.logits.grad_fn()->name() == expected["logits_grad_fn"].get<std::string>());
    for (std::size_t i = 0; i < run.params.size(); ++i) {
      INFO("gradient of parameter " << i);
      // Master weights: float32 parameters get float32 gradients, through the casts.
      require_close(run.params[i].grad(), testing::tensor_from_json(expected["grads"][i]), 4 * unit, 4 * unit);
    }
  }
  // And the 16-bit run is not the float32 one: the casts happened.
  CHECK(run_mlp(kBFloat16).loss.item<double>() != run_mlp(std::nullopt).loss.item<double>());
}

TEST_CASE("autocast: a parameter is cast once per region and its gradient summed", "[autocast]") {
  manual_seed(2);
  Tensor weight = ember::randn({3, 3}).requires_grad_(true);
  const Tensor x = ember::randn({2, 3});
  Tensor first, second;
  {
    AutocastGuard autocast(DeviceType::CPU);
    CHECK(is_autocast_enabled(DeviceType::CPU));
    CHECK(get_autocast_dtype(DeviceType::CPU) == kBFloat16);  // PyTorch's default on the CPU
    first = F::linear(x, weight);
    second = F::linear(x, weight);
    // Both products read the same bfloat16 copy of the weight: mm <- t <- one ToCopyBackward0.
    CHECK(weight_cast_node(first)->name() == "ToCopyBackward0");
    CHECK(weight_cast_node(first) == weight_cast_node(second));
  }
  CHECK_FALSE(is_autocast_enabled(DeviceType::CPU));
  (first.sum() + second.sum()).backward();
  REQUIRE(weight.grad().dtype() == kFloat32);
  // d/dW of sum(x Wᵀ) twice: 2 · (column sums of x) in every row. Each product's gradient is
  // bfloat16 (the column sums of x rounded to it, then rounded again), the two are added at
  // the shared cast, and only then widened to float32.
  const Tensor column_sums = x.to(kBFloat16).to(kFloat32).sum({0}).to(kBFloat16).to(kFloat32);
  testing::require_matches(weight.grad(), (column_sums * 2).expand({3, 3}).contiguous(), 0.0);
}

TEST_CASE("autocast: regions nest, can be switched off inside, and reject a non-16-bit dtype", "[autocast]") {
  const Tensor a = ember::ones({2, 2});
  {
    AutocastGuard outer(DeviceType::CPU, kFloat16);
    CHECK(ember::mm(a, a).dtype() == kFloat16);
    {
      AutocastGuard off(DeviceType::CPU, std::nullopt, /*enabled=*/false);
      CHECK(ember::mm(a, a).dtype() == kFloat32);
    }
    CHECK(ember::mm(a, a).dtype() == kFloat16);
    // CUDA's region is separate: a CPU tensor is not cast by it.
    AutocastGuard cuda_only(DeviceType::CUDA);
    CHECK(get_autocast_dtype(DeviceType::CUDA) == kFloat16);
  }
  CHECK(ember::mm(a, a).dtype() == kFloat32);
  REQUIRE_THROWS_AS(AutocastGuard(DeviceType::CPU, kFloat32), DTypeError);
  CHECK_FALSE(is_autocast_enabled(DeviceType::CPU));  // the failed guard changed nothing
}
