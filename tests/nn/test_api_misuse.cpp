// tests/nn/test_api_misuse.cpp — nn misuse from issue 16 gets PyTorch's errors: an optimizer
// given a non-leaf tensor, and Linear given a 0-d input. Messages checked against PyTorch 2.15
// (torch.optim.SGD([x * 2]), torch.nn.Linear(1, 2)(torch.tensor(1.))).
#include <catch2/catch.hpp>

#include <ember/ember.h>

using namespace ember;

TEST_CASE("optimizers refuse a non-leaf tensor", "[nn][optim][misuse]") {
  Tensor x = ember::ones({3}).requires_grad_();
  Tensor y = x * 2;  // the output of an op: backward never fills its .grad
  REQUIRE_THROWS_AS((optim::SGD({y}, {.lr = 0.1})), ValueError);
  REQUIRE_THROWS_WITH((optim::SGD({y}, {.lr = 0.1})), "can't optimize a non-leaf Tensor");
  REQUIRE_THROWS_WITH((optim::Adam({x, y}, {})), "can't optimize a non-leaf Tensor");
  REQUIRE_THROWS_WITH((optim::AdamW({y}, {})), "can't optimize a non-leaf Tensor");
  // PyTorch accepts a non-leaf that retains its gradient (is_leaf or retains_grad).
  Tensor kept = x * 3;
  kept.retain_grad();
  REQUIRE_NOTHROW(optim::SGD({kept}, {.lr = 0.1}));
  // A leaf that does not require grad is accepted too (PyTorch skips it in step()).
  REQUIRE_NOTHROW(optim::SGD({ember::ones({2})}, {.lr = 0.1}));
}

TEST_CASE("Linear on a 0-d input gives PyTorch's message", "[nn][linear][misuse]") {
  nn::Linear layer(1, 2);
  Tensor scalar = ember::tensor(1.0);
  REQUIRE(scalar.dim() == 0);
  REQUIRE_THROWS_AS(layer.forward(scalar), ShapeError);
  REQUIRE_THROWS_WITH(layer.forward(scalar), "both arguments to linear need to be at least 1D, but they are 0D and 2D");
  // The 1-d input it would have needed works.
  REQUIRE(layer.forward(ember::tensor({1.0})).sizes() == Shape{2});
}
