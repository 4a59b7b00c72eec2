// tests/nn/test_functional.cpp — nn::functional forwards to the autograd ops with the
// right defaults: values vs PyTorch for each loss and reduction, and the bad-target error.
#include <catch2/catch.hpp>

#include <ember/ember.h>

#include "nn_test_helpers.h"

using namespace ember;
namespace F = ember::nn::functional;
using ember::testing::load_reference;
using ember::testing::require_close;
using ember::testing::tensor_from_json;

TEST_CASE("functional losses and activations match PyTorch", "[nn][functional]") {
  const auto ref = load_reference("nn.json")["functional"];
  Tensor logits = tensor_from_json(ref["logits"]);
  Tensor target = tensor_from_json(ref["target"]);
  require_close(F::cross_entropy(logits, target), ref["ce_mean"]);
  require_close(F::cross_entropy(logits, target, F::Reduction::Sum), ref["ce_sum"]);
  require_close(F::cross_entropy(logits, target, F::Reduction::None), ref["ce_none"]);
  require_close(F::cross_entropy(logits, ember::tensor({2, -100, 1, 1})), ref["ce_ignore"]);
  require_close(F::cross_entropy(logits, target, F::Reduction::Mean, -100, 0.1), ref["ce_smooth"]);
  require_close(F::cross_entropy(logits.t().contiguous().t(), target), ref["ce_noncontig"]);
  require_close(F::log_softmax(logits, 1), ref["log_softmax"]);
  require_close(F::softmax(logits, 1), ref["softmax"]);
  require_close(F::nll_loss(F::log_softmax(logits, 1), target), ref["nll_mean"]);
  Tensor probs = tensor_from_json(ref["probs"]);
  Tensor labels = tensor_from_json(ref["labels01"]);
  Tensor z = tensor_from_json(ref["z"]);
  require_close(F::binary_cross_entropy(probs, labels), ref["bce"]);
  require_close(F::binary_cross_entropy_with_logits(z, labels), ref["bce_logits"]);
  require_close(F::mse_loss(z, labels), ref["mse"]);
  require_close(F::mse_loss(z, labels, F::Reduction::Sum), ref["mse_sum"]);
  REQUIRE(F::relu(ember::tensor({-1.0, 2.0})).equal(ember::tensor({0.0, 2.0})));
  REQUIRE(F::sigmoid(ember::tensor(0.0)).item<double>() == 0.5);
  REQUIRE(F::tanh(ember::tensor(0.0)).item<double>() == 0.0);
}

TEST_CASE("cross_entropy records the graph and rejects bad targets", "[nn][functional]") {
  const auto ref = load_reference("nn.json")["functional"];
  Tensor logits = tensor_from_json(ref["logits"]).requires_grad_();
  Tensor loss = F::cross_entropy(logits, tensor_from_json(ref["target"]));
  REQUIRE(loss.grad_fn() != nullptr);
  loss.backward();
  REQUIRE(logits.grad().sizes() == logits.sizes());
  REQUIRE_THROWS_WITH(F::cross_entropy(logits, ember::tensor({2, 0, 3, 1})), ref["ce_out_of_bounds"].get<std::string>());
  // Class indices must be integers (PyTorch would read float targets as probabilities,
  // which ember does not support): an error, never a silent misreading.
  REQUIRE_THROWS_AS(F::nll_loss(logits, ember::tensor({2.0, 0.0, 1.0, 1.0})), Error);
}
