// tests/nn/test_reference_mode.cpp — the training step in reference mode (core/kernel_mode.h):
// cross_entropy is log_softmax then nll_loss (its tape shows both nodes), Sequential runs
// Linear and ReLU one after the other, SGD updates with the composite tensor ops; and a few
// steps of training land where the fast, fused step lands (the fused cross-entropy gradient
// is computed in double, so within float32 rounding, not bit for bit).
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include <ember/core/kernel_mode.h>
#include <ember/ember.h>

#include "test_support.h"

using namespace ember;
using ember::testing::to_vector;

namespace {

std::shared_ptr<nn::Sequential> seeded_mlp() {
  ember::manual_seed(123);
  return nn::sequential({std::make_shared<nn::Linear>(5, 7), std::make_shared<nn::ReLU>(),
                         std::make_shared<nn::Linear>(7, 3)});
}

// Node names depth first (valid edges only).
void collect_names(const std::shared_ptr<autograd::Node>& node, std::vector<std::string>& names) {
  names.push_back(node->name());
  for (const auto& edge : node->next_edges())
    if (edge.is_valid()) collect_names(edge.node, names);
}

std::vector<std::string> tape_of(const Tensor& root) {
  std::vector<std::string> names;
  collect_names(std::static_pointer_cast<autograd::Node>(root.grad_fn()), names);
  return names;
}

// Trains seeded_mlp for three SGD steps (momentum, weight decay) on fixed data; returns every
// parameter, flattened, and the losses.
std::vector<double> train_three_steps(std::vector<double>& losses) {
  auto model = seeded_mlp();
  optim::SGD optimizer(model->parameters(), {.lr = 0.3, .momentum = 0.9, .weight_decay = 0.01});
  ember::manual_seed(7);
  Tensor x = ember::randn({8, 5});
  Tensor y = ember::tensor({0, 2, 1, 1, 0, 2, 2, 1});
  for (int step = 0; step < 3; ++step) {
    optimizer.zero_grad();
    Tensor loss = ember::cross_entropy(model->forward(x), y);
    losses.push_back(loss.item<double>());
    loss.backward();
    optimizer.step();
  }
  std::vector<double> parameters;
  for (const Tensor& p : model->parameters())
    for (double v : to_vector(p)) parameters.push_back(v);
  return parameters;
}

}  // namespace

TEST_CASE("reference mode: cross_entropy is log_softmax then nll_loss, with the fused loss's bits",
          "[nn][reference]") {
  Tensor logits = ember::tensor({{1.5, -0.25, 0.75}, {0.1, 2.0, -1.0}});
  Tensor target = ember::tensor({2, 1});
  Tensor fast_loss, reference_loss;
  {
    KernelModeGuard mode(KernelMode::Fast);
    Tensor x = logits.clone().requires_grad_();
    fast_loss = ember::cross_entropy(x * 1.0, target);
    CHECK(tape_of(fast_loss) == std::vector<std::string>{"NllLossBackward0", "MulBackward0", "AccumulateGrad"});
  }
  {
    KernelModeGuard mode(KernelMode::Reference);
    Tensor x = logits.clone().requires_grad_();
    reference_loss = ember::cross_entropy(x * 1.0, target);
    CHECK(tape_of(reference_loss) ==
          std::vector<std::string>{"NllLossBackward0", "LogSoftmaxBackward0", "MulBackward0", "AccumulateGrad"});
  }
  CHECK(reference_loss.item<float>() == fast_loss.item<float>());
}

TEST_CASE("reference mode: Sequential's Linear + ReLU gives the fused step's values", "[nn][reference]") {
  auto model = seeded_mlp();
  ember::manual_seed(3);
  Tensor x = ember::randn({4, 5});
  Tensor fast, reference;
  {
    KernelModeGuard mode(KernelMode::Fast);
    fast = model->forward(x);
  }
  {
    KernelModeGuard mode(KernelMode::Reference);
    reference = model->forward(x);
    // ... which is each module's own forward, one after the other.
    Tensor by_hand = (*model)[2]->forward((*model)[1]->forward((*model)[0]->forward(x)));
    CHECK(to_vector(reference) == to_vector(by_hand));
  }
  const auto f = to_vector(fast), r = to_vector(reference);
  REQUIRE(f.size() == r.size());
  for (std::size_t i = 0; i < f.size(); ++i) CHECK(r[i] == Approx(f[i]).epsilon(1e-6).margin(1e-7));
}

TEST_CASE("reference mode: three SGD steps land where the fused fast steps land", "[nn][reference]") {
  std::vector<double> fast_losses, reference_losses;
  std::vector<double> fast, reference;
  {
    KernelModeGuard mode(KernelMode::Fast);
    fast = train_three_steps(fast_losses);
  }
  {
    KernelModeGuard mode(KernelMode::Reference);
    reference = train_three_steps(reference_losses);
  }
  REQUIRE(fast_losses.size() == reference_losses.size());
  CHECK(reference_losses[0] == fast_losses[0]);  // the first loss: same weights, same bits
  for (std::size_t i = 0; i < fast_losses.size(); ++i) CHECK(reference_losses[i] == Approx(fast_losses[i]).epsilon(1e-6));
  REQUIRE(fast.size() == reference.size());
  for (std::size_t i = 0; i < fast.size(); ++i) {
    INFO("parameter element " << i);
    CHECK(reference[i] == Approx(fast[i]).epsilon(1e-5).margin(1e-6));
  }
}
