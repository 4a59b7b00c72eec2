// tests/autograd/test_hook_results.cpp — a tensor hook may replace a gradient only with one
// of the same size, dtype and device. PyTorch 2.15's messages (a hook named `hook`):
//   x.register_hook(hook) returning torch.ones(2, 3) for a [3] tensor:
//     RuntimeError: hook 'hook' has changed the size of value
//   returning torch.ones(3, dtype=torch.int64) for a float32 tensor:
//     RuntimeError: hook 'hook' has changed the type of value (was torch.FloatTensor got torch.LongTensor)
// Before the check, the [2, 3] gradient was summed into the [3] leaf and the int64 one
// landed on the float leaf.
#include <catch2/catch.hpp>

#include <ember/ember.h>

#include "test_support.h"

using ember::Tensor;
using ember::testing::to_vector;

TEST_CASE("a leaf's hook that changes the gradient's size is refused", "[autograd][hooks][misuse]") {
  Tensor x = ember::ones({3}).requires_grad_();
  x.register_hook([](const Tensor&) { return ember::ones({2, 3}); });
  REQUIRE_THROWS_AS((x * 2.0).sum().backward(), ember::AutogradError);
  REQUIRE_THROWS_WITH((x * 2.0).sum().backward(), "hook 'hook' has changed the size of value");
  REQUIRE_FALSE(x.grad().defined());  // nothing was accumulated
}

TEST_CASE("a leaf's hook that changes the gradient's dtype is refused", "[autograd][hooks][misuse]") {
  Tensor x = ember::ones({3}).requires_grad_();
  x.register_hook([](const Tensor&) { return ember::ones({3}, ember::kInt64); });
  REQUIRE_THROWS_WITH((x * 2.0).sum().backward(),
                      "hook 'hook' has changed the type of value (was torch.FloatTensor got torch.LongTensor)");
  REQUIRE_FALSE(x.grad().defined());
}

TEST_CASE("a non-leaf's hook that changes the gradient's size or dtype is refused", "[autograd][hooks][misuse]") {
  Tensor x = ember::ones({3}).requires_grad_();
  Tensor y = x * 2.0;
  SECTION("size") {
    y.register_hook([](const Tensor&) { return ember::ones({2, 3}); });
    REQUIRE_THROWS_WITH((y * 2.0).sum().backward(), "hook 'hook' has changed the size of value");
  }
  SECTION("dtype: even float64 for float32 (PyTorch refuses it too)") {
    y.register_hook([](const Tensor& g) { return g.to(ember::kFloat64); });
    REQUIRE_THROWS_WITH((y * 2.0).sum().backward(),
                        "hook 'hook' has changed the type of value (was torch.FloatTensor got torch.DoubleTensor)");
  }
  SECTION("a type change is reported before a size change, as PyTorch checks") {
    y.register_hook([](const Tensor&) { return ember::ones({2, 3}, ember::kInt64); });
    REQUIRE_THROWS_WITH((y * 2.0).sum().backward(),
                        "hook 'hook' has changed the type of value (was torch.FloatTensor got torch.LongTensor)");
  }
  REQUIRE_FALSE(x.grad().defined());
}

TEST_CASE("a hook's replacement of the right size and dtype is still used", "[autograd][hooks]") {
  Tensor x = ember::ones({3}).requires_grad_();
  x.register_hook([](const Tensor& g) { return g * 10.0; });
  (x * 2.0).sum().backward();
  REQUIRE(to_vector(x.grad()) == std::vector<double>{20.0, 20.0, 20.0});
}
