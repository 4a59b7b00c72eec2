// tests/nn/test_loss_stability.cpp — cross_entropy, log_softmax, softmax and the binary
// cross-entropies on huge logits (±1000, ±1e4), in float32 and float64, against PyTorch's
// values and gradients (tests/reference/gen_loss_stability.py). A naive exp() overflows to
// inf here and log(0) gives -inf; the stable formulations (subtracting the max, the
// log-sum-exp form of BCE-with-logits, log clamped at -100) must stay finite and exact.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>

#include <ember/ember.h>

#include "nn_test_helpers.h"

using namespace ember;
namespace F = ember::nn::functional;
using ember::testing::load_reference;
using ember::testing::require_close;
using ember::testing::tensor_from_json;
using ember::testing::to_vector;

namespace {

void require_finite(const Tensor& t) {
  for (double v : to_vector(t)) REQUIRE(std::isfinite(v));
}

// Compares value and gradient; `forward` maps a leaf to the tensor whose (weighted) sum
// the reference differentiated.
void check(const nlohmann::json& ref, const std::string& name, const Tensor& input,
           const std::function<Tensor(const Tensor&)>& forward, const std::function<Tensor(const Tensor&)>& reduce,
           double rtol, double atol) {
  INFO(name);
  Tensor leaf = input.detach().clone().requires_grad_();
  Tensor out = forward(leaf);
  require_finite(out);
  require_close(out, ref[name], rtol, atol);
  if (ref.contains(name + "_grad")) {
    reduce(out).backward();
    require_finite(leaf.grad());
    require_close(leaf.grad(), ref[name + "_grad"], rtol, atol);
  }
}

}  // namespace

TEST_CASE("losses and softmax stay finite and match PyTorch on huge logits", "[nn][functional][stability]") {
  const auto reference = load_reference("loss_stability.json");
  for (const std::string dtype : {"float32", "float64"}) {
    INFO(dtype);
    const auto& ref = reference[dtype];
    const double rtol = dtype == "float32" ? 1e-5 : 1e-10;
    const double atol = dtype == "float32" ? 1e-6 : 1e-12;
    const Tensor logits = tensor_from_json(ref["logits"]);
    const Tensor target = tensor_from_json(ref["target"]);
    auto sum = [](const Tensor& t) { return t.sum(); };
    auto itself = [](const Tensor& t) { return t; };

    check(ref, "ce_none", logits, [&](const Tensor& x) { return F::cross_entropy(x, target, F::Reduction::None); },
          sum, rtol, atol);
    check(ref, "ce_mean", logits, [&](const Tensor& x) { return F::cross_entropy(x, target); }, itself, rtol, atol);
    check(ref, "ce_smooth", logits,
          [&](const Tensor& x) { return F::cross_entropy(x, target, F::Reduction::Mean, -100, 0.1); }, itself, rtol,
          atol);

    // The reference weighted the outputs by arange(15) / 7 - 1 before summing.
    const Tensor weights = (ember::arange(15, logits.dtype()).reshape({5, 3}) / 7.0) - 1.0;
    auto weighted = [&](const Tensor& t) { return (t * weights).sum(); };
    for (int dim : {0, 1}) {
      check(ref, "log_softmax_dim" + std::to_string(dim), logits,
            [&](const Tensor& x) { return F::log_softmax(x, dim); }, weighted, rtol, atol);
      check(ref, "softmax_dim" + std::to_string(dim), logits, [&](const Tensor& x) { return F::softmax(x, dim); },
            weighted, rtol, atol);
    }

    const Tensor z = tensor_from_json(ref["bce_z"]);
    const Tensor labels = tensor_from_json(ref["bce_target"]);
    check(ref, "bce_logits_none", z,
          [&](const Tensor& x) { return F::binary_cross_entropy_with_logits(x, labels, F::Reduction::None); }, sum,
          rtol, atol);
    check(ref, "bce_logits_mean", z, [&](const Tensor& x) { return F::binary_cross_entropy_with_logits(x, labels); },
          itself, rtol, atol);
    check(ref, "bce_logits_sum", z,
          [&](const Tensor& x) { return F::binary_cross_entropy_with_logits(x, labels, F::Reduction::Sum); }, itself,
          rtol, atol);

    // Probabilities of exactly 0 and 1: log is clamped at -100, so the loss is 100, not inf.
    const Tensor probs = tensor_from_json(ref["bce_probs"]);
    const Tensor targets = tensor_from_json(ref["bce_probs_target"]);
    check(ref, "bce_saturated_none", probs,
          [&](const Tensor& x) { return F::binary_cross_entropy(x, targets, F::Reduction::None); }, sum, rtol, atol);
  }
}
