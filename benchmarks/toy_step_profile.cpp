// benchmarks/toy_step_profile.cpp — runs ember-bench's train_step/toy workload N times, for
// counting instructions with valgrind (docs/performance.md, "Fixed costs per step").
//
// Timings on a shared machine swing by ±30 %; instruction counts do not. This program does
// exactly what ember-bench's `train_step/toy/b<batch>` times (zero_grad, the 2-30-20-2
// Sequential MLP forward, cross-entropy, backward, SGD), with no harness around it, so that
//
//   valgrind --tool=callgrind --toggle-collect='run_steps*' build/bin/toy_step_profile 100
//
// counts only the steps (divide by the step count), and callgrind_annotate shows where they go.
// Usage: toy_step_profile [steps=100] [batch=32] [warm-up steps=10]
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include <ember/ember.h>

namespace nn = ember::nn;
namespace F = ember::nn::functional;

// Not inlined, so that callgrind's --toggle-collect can name it.
[[gnu::noinline]] void run_steps(int steps, nn::Sequential& model, ember::optim::SGD& optimizer,
                                 const ember::Tensor& features, const ember::Tensor& labels) {
  for (int i = 0; i < steps; ++i) {
    optimizer.zero_grad();
    ember::Tensor loss = F::cross_entropy(model(features), labels);
    loss.backward();
    optimizer.step();
  }
}

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 100;
  const std::int64_t batch = argc > 2 ? std::atoll(argv[2]) : 32;
  const int warm_up = argc > 3 ? std::atoi(argv[3]) : 10;
  ember::manual_seed(123);
  auto model = std::make_shared<nn::Sequential>();  // ember-bench's make_mlp({2, 30, 20, 2})
  model->push_back(std::make_shared<nn::Linear>(2, 30));
  model->push_back(std::make_shared<nn::ReLU>());
  model->push_back(std::make_shared<nn::Linear>(30, 20));
  model->push_back(std::make_shared<nn::ReLU>());
  model->push_back(std::make_shared<nn::Linear>(20, 2));
  ember::optim::SGD optimizer(model->parameters(), {.lr = 1e-3});
  ember::Tensor features = ember::randn({batch, 2});
  ember::Tensor labels = ember::randint(0, 2, {batch}, ember::TensorOptions().dtype(ember::kInt64));
  run_steps(warm_up, *model, optimizer, features, labels);  // fills the allocator's caches
  run_steps(steps, *model, optimizer, features, labels);
  // The loss after the steps, so that a change that alters the numbers shows here too.
  ember::NoGradGuard no_grad;
  std::printf("loss after %d steps: %.9g\n", warm_up + steps,
              F::cross_entropy((*model)(features), labels).item<double>());
  return 0;
}
