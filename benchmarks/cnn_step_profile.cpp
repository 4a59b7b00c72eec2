// benchmarks/cnn_step_profile.cpp — times ember's CNN training step (issue 19's network) and
// each layer's share of it, so that the CPU conv path can be tuned against PyTorch's loop.
//
// The network is `ember train --model cnn`'s (apps/cli/model.cpp), in PyTorch terms:
//   Conv2d(1, 32, 3, padding=1), ReLU, MaxPool2d(2), Conv2d(32, 64, 3, padding=1), ReLU,
//   MaxPool2d(2), Flatten, Linear(3136, 128), ReLU, Linear(128, 10)
// and one step is zero_grad, forward, cross-entropy, backward, SGD (momentum 0 here).
// It prints examples/s for whole steps, then the forward time of every module and the
// backward + step remainder, from the median of the timed steps.
// Usage: cnn_step_profile [steps=30] [batch=32] [warm-up steps=5] [threads=all] [fp32|bf16]
// (bf16: each forward and loss under ember::AutocastGuard(CPU, bfloat16), as `ember train
// --precision bf16` runs them; the backward runs in the dtypes the forward recorded.)
// Under callgrind: valgrind --tool=callgrind --toggle-collect='run_steps*' bin/cnn_step_profile 3 32 1
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <ember/core/parallel.h>
#include <ember/ember.h>

namespace nn = ember::nn;
namespace F = ember::nn::functional;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

std::shared_ptr<nn::Sequential> make_cnn() {
  auto model = std::make_shared<nn::Sequential>();
  model->push_back(std::make_shared<nn::Conv2d>(1, 32, 3, nn::Conv2dOptions{.padding = 1}));
  model->push_back(std::make_shared<nn::ReLU>());
  model->push_back(std::make_shared<nn::MaxPool2d>(2));
  model->push_back(std::make_shared<nn::Conv2d>(32, 64, 3, nn::Conv2dOptions{.padding = 1}));
  model->push_back(std::make_shared<nn::ReLU>());
  model->push_back(std::make_shared<nn::MaxPool2d>(2));
  model->push_back(std::make_shared<nn::Flatten>());
  model->push_back(std::make_shared<nn::Linear>(64 * 7 * 7, 128));
  model->push_back(std::make_shared<nn::ReLU>());
  model->push_back(std::make_shared<nn::Linear>(128, 10));
  return model;
}

// Not inlined, so that callgrind's --toggle-collect can name it.
bool bf16 = false;  // the fifth argument

// The forward and the loss, under autocast for bf16.
ember::Tensor forward_loss(nn::Sequential& model, const ember::Tensor& images, const ember::Tensor& labels) {
  std::optional<ember::AutocastGuard> autocast;
  if (bf16) autocast.emplace(ember::DeviceType::CPU, ember::kBFloat16);
  return F::cross_entropy(model(images), labels);
}

[[gnu::noinline]] void run_steps(int steps, nn::Sequential& model, ember::optim::SGD& optimizer,
                                 const ember::Tensor& images, const ember::Tensor& labels) {
  for (int i = 0; i < steps; ++i) {
    optimizer.zero_grad();
    ember::Tensor loss = forward_loss(model, images, labels);
    loss.backward();
    optimizer.step();
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 30;
  const std::int64_t batch = argc > 2 ? std::atoll(argv[2]) : 32;
  const int warm_up = argc > 3 ? std::atoi(argv[3]) : 5;
  if (argc > 4) ember::set_num_threads(std::atoi(argv[4]));
  bf16 = argc > 5 && std::string(argv[5]) == "bf16";
  ember::manual_seed(0);
  auto model = make_cnn();
  ember::optim::SGD optimizer(model->parameters(), {.lr = 0.01});
  ember::Tensor images = ember::rand({batch, 1, 28, 28});
  ember::Tensor labels = ember::randint(0, 10, {batch}, ember::TensorOptions().dtype(ember::kInt64));
  run_steps(warm_up, *model, optimizer, images, labels);

  std::vector<double> step_seconds;
  for (int i = 0; i < steps; ++i) {
    const auto start = Clock::now();
    run_steps(1, *model, optimizer, images, labels);
    step_seconds.push_back(seconds_since(start));
  }
  const double step = median(step_seconds);
  const double fastest = *std::min_element(step_seconds.begin(), step_seconds.end());
  std::printf("CNN step (%s), batch %lld, %d threads: median %.3f ms (%.0f examples/s), fastest %.3f ms (%.0f examples/s)\n",
              bf16 ? "bf16 autocast" : "fp32", static_cast<long long>(batch), ember::get_num_threads(), step * 1e3, batch / step, fastest * 1e3,
              batch / fastest);

  // Per module: the forward alone (with autograd recording, as in training), median of steps.
  std::vector<std::vector<double>> module_seconds(model->size());
  std::vector<double> backward_seconds;
  for (int i = 0; i < steps; ++i) {
    optimizer.zero_grad();
    ember::Tensor x = images;
    std::optional<ember::AutocastGuard> autocast;
    if (bf16) autocast.emplace(ember::DeviceType::CPU, ember::kBFloat16);
    for (std::size_t m = 0; m < model->size(); ++m) {
      const auto start = Clock::now();
      x = (*model)[m]->forward(x);
      module_seconds[m].push_back(seconds_since(start));
    }
    const auto start = Clock::now();
    ember::Tensor loss = F::cross_entropy(x, labels);
    autocast.reset();
    loss.backward();
    optimizer.step();
    backward_seconds.push_back(seconds_since(start));
  }
  for (std::size_t m = 0; m < model->size(); ++m) {
    const double t = median(module_seconds[m]);
    std::printf("  forward %-2zu %-48s %8.3f ms %5.1f%%\n", m, (*model)[m]->repr().substr(0, 48).c_str(),
                t * 1e3, 100 * t / step);
  }
  const double t = median(backward_seconds);
  std::printf("  cross_entropy + backward + SGD step                   %8.3f ms %5.1f%%\n", t * 1e3,
              100 * t / step);
  return 0;
}
