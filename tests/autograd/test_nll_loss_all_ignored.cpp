// tests/autograd/test_nll_loss_all_ignored.cpp — nll_loss (and cross_entropy taken the
// composite way, as EMBER_KERNELS=reference takes it) when every target is ignore_index, with
// 'mean': the loss is nan (0 / 0) and the gradient 0, as PyTorch gives
// (F.nll_loss(F.log_softmax(x, 1), torch.tensor([-100, -100, -100])).backward() -> zeros).
// The composite backward used to divide by the zero kept rows and return NaN.
#include <catch2/catch.hpp>

#include <cmath>

#include <ember/core/kernel_mode.h>
#include <ember/ember.h>

#include "test_support.h"

using namespace ember;
using ember::testing::to_vector;

TEST_CASE("nll_loss, every target ignored, mean: nan loss, zero gradient as PyTorch", "[autograd][loss][nll_loss]") {
  Tensor target = ember::tensor({-100, -100, -100});
  auto check = [&](bool through_cross_entropy) {
    Tensor x = ember::tensor({{0.5, -1.0, 2.0, 0.25}, {1.5, 0.0, -0.5, 3.0}, {-2.0, 1.0, 0.0, 0.5}}).requires_grad_();
    Tensor loss = through_cross_entropy ? ember::cross_entropy(x, target) : ember::nll_loss(ember::log_softmax(x, 1), target);
    CHECK(std::isnan(loss.item<float>()));
    loss.backward();
    for (double g : to_vector(x.grad())) CHECK(g == 0.0);
  };
  SECTION("nll_loss of log_softmax") { check(false); }
  SECTION("cross_entropy in reference mode (log_softmax + nll_loss)") {
    KernelModeGuard mode(KernelMode::Reference);
    check(true);
  }
  SECTION("cross_entropy fused") {
    KernelModeGuard mode(KernelMode::Fast);
    check(true);
  }
}
