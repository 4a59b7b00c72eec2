// tests/autograd/test_loss_errors.cpp — the losses' argument checks, with PyTorch's messages,
// and their behaviour on edge inputs (everything ignored, 1-D input, 0-d target).
// Messages are PyTorch 2.15's (what `F.nll_loss(...)` etc. raise for the same inputs).
#include <catch2/catch.hpp>

#include <cmath>

#include <ember/ember.h>

using ember::Reduction;
using ember::Tensor;

TEST_CASE("nll_loss checks its target", "[autograd][losses][errors]") {
  Tensor logp = ember::log_softmax(ember::tensor({{0.1, 0.2, 0.3}, {0.5, -0.5, 0.0}}), 1);
  REQUIRE_THROWS_AS(ember::nll_loss(logp, ember::tensor({3, 0})), ember::IndexError);
  REQUIRE_THROWS_WITH(ember::nll_loss(logp, ember::tensor({3, 0})), "Target 3 is out of bounds.");
  REQUIRE_THROWS_WITH(ember::nll_loss(logp, ember::tensor({-1, 0})), "Target -1 is out of bounds.");
  REQUIRE_THROWS_AS(ember::nll_loss(logp, ember::tensor({1.0, 0.0})), ember::DTypeError);
  REQUIRE_THROWS_WITH(ember::nll_loss(logp, ember::tensor({1.0, 0.0})),
                      "expected target dtype to be Long or Byte, but got Float");
  REQUIRE_THROWS_WITH(ember::nll_loss(logp, ember::tensor({1, 0}, ember::kInt32)),
                      "expected target dtype to be Long or Byte, but got Int");
  // uint8 class indices are taken (PyTorch 2.x), except by the [N, C, d...] form (nll_loss2d).
  REQUIRE(ember::nll_loss(logp, ember::tensor({1, 0}, ember::kUInt8)).equal(ember::nll_loss(logp, ember::tensor({1, 0}))));
  REQUIRE(ember::cross_entropy(logp, ember::tensor({2, 0}, ember::kUInt8))
              .equal(ember::cross_entropy(logp, ember::tensor({2, 0}))));
  REQUIRE_THROWS_WITH(ember::nll_loss(ember::zeros({2, 3, 4}), ember::zeros({2, 4}, ember::kUInt8)),
                      "expected scalar type Long but found Byte");
  REQUIRE_THROWS_AS(ember::nll_loss(logp, ember::tensor({1, 0, 2})), ember::ShapeError);
  REQUIRE_THROWS_WITH(ember::nll_loss(logp, ember::tensor({1, 0, 2})),
                      "Expected input batch_size (2) to match target batch_size (3).");
  REQUIRE_THROWS_WITH(ember::nll_loss(ember::zeros({2, 3, 4}), ember::zeros({2, 3}, ember::kInt64)),
                      "Expected target size [2, 4], got [2, 3]");
  REQUIRE_THROWS_WITH(ember::nll_loss(ember::zeros({}), ember::tensor(0)), "Expected 1 or more dimensions (got 0)");
}

TEST_CASE("nll_loss with every target ignored is nan under mean, 0 under sum", "[autograd][losses]") {
  Tensor logp = ember::log_softmax(ember::tensor({{0.1, 0.2, 0.3}}), 1);
  REQUIRE(std::isnan(ember::nll_loss(logp, ember::tensor({-100})).item<double>()));
  REQUIRE(ember::nll_loss(logp, ember::tensor({-100}), Reduction::Sum).item<double>() == 0.0);
}

TEST_CASE("binary_cross_entropy checks sizes and the input range", "[autograd][losses][errors]") {
  Tensor probabilities = ember::tensor({0.2, 0.7});
  REQUIRE_THROWS_AS(ember::binary_cross_entropy(probabilities, ember::tensor({{1.0}, {0.0}})), ember::ValueError);
  REQUIRE_THROWS_WITH(ember::binary_cross_entropy(probabilities, ember::tensor({{1.0}, {0.0}})),
                      "Using a target size (torch.Size([2, 1])) that is different to the input size (torch.Size([2])) "
                      "is deprecated. Please ensure they have the same size.");
  REQUIRE_THROWS_WITH(ember::binary_cross_entropy(ember::tensor({1.5, 0.5}), ember::tensor({1.0, 0.0})),
                      "all elements of input should be between 0 and 1");
  REQUIRE_THROWS_WITH(ember::binary_cross_entropy_with_logits(probabilities, ember::tensor({1.0})),
                      "Target size (torch.Size([1])) must be the same as input size (torch.Size([2]))");
  // log is clamped at -100: a certain wrong answer costs 100, not infinity.
  REQUIRE(ember::binary_cross_entropy(ember::tensor({0.0}), ember::tensor({1.0})).item<double>() == 100.0);
}

TEST_CASE("cross_entropy checks label_smoothing", "[autograd][losses][errors]") {
  Tensor logits = ember::tensor({{0.1, 0.2, 0.3}});
  REQUIRE_THROWS_AS(ember::cross_entropy(logits, ember::tensor({1}), Reduction::Mean, -100, 1.5), ember::ValueError);
  REQUIRE_THROWS_WITH(ember::cross_entropy(logits, ember::tensor({1}), Reduction::Mean, -100, 1.5),
                      "label_smoothing must be between 0.0 and 1.0. Got: 1.5");
}

TEST_CASE("losses record PyTorch's node names", "[autograd][losses]") {
  Tensor x = ember::tensor({{0.1, 0.2, 0.3}}, ember::requires_grad());
  Tensor p = ember::tensor({0.3, 0.6}, ember::requires_grad());
  Tensor t = ember::tensor({1.0, 0.0});
  REQUIRE(ember::cross_entropy(x, ember::tensor({2}))
              .grad_fn()->name() == "NllLossBackward0");
  REQUIRE(ember::binary_cross_entropy(p, t).grad_fn()->name() == "BinaryCrossEntropyBackward0");
  REQUIRE(ember::binary_cross_entropy_with_logits(p, t).grad_fn()->name() == "BinaryCrossEntropyWithLogitsBackward0");
  REQUIRE(ember::mse_loss(p, t).grad_fn()->name() == "MseLossBackward0");
  REQUIRE(ember::mse_loss(p, t, Reduction::None).sizes() == ember::Shape{2});
}

TEST_CASE("reductions over nothing and matmul of 0-d are refused with PyTorch's messages", "[autograd][errors]") {
  REQUIRE_THROWS_WITH(ember::max(ember::zeros({0})),
                      "max(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim "
                      "with the 'dim' argument.");
  Tensor scalar = ember::tensor(2.0, ember::requires_grad());
  REQUIRE_THROWS_WITH(ember::matmul(scalar, ember::tensor({1.0})),
                      "both arguments to matmul need to be at least 1D, but they are 0D and 1D");
}
