// benchmarks/gpt_step_profile.cpp — times ember's GPT training step (issue 21's speed goal),
// the loop of `ember train --model gpt`, against benchmarks/peers/gpt_step_pytorch.py.
//
// The model is nn::GPT with the trainer's defaults: 2 layers, 4 heads, width 128, context
// T = 64, a 65-character vocabulary (the size of the default word list's), batch 32. One step
// is forward, cross-entropy, backward, AdamW (nanoGPT's two groups), zero_grad, on a fixed
// batch of random token ids (the batch's contents do not change the work). It prints
// training tokens/s (B·T per step) from the median and the fastest of the timed steps, then
// the CPU time per step (steadier than the wall clock on a shared machine, with one thread)
// and the share of the forward pass (median of separately timed forwards).
// Usage: gpt_step_profile [steps=30] [batch=32] [warm-up steps=5] [threads=all]
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <ember/core/parallel.h>
#include <ember/ember.h>
#include <ember/nn/gpt.h>

namespace nn = ember::nn;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// Not inlined, so that callgrind's --toggle-collect can name it.
[[gnu::noinline]] void run_steps(int steps, nn::GPT& model, ember::optim::AdamW& optimizer, const ember::Tensor& x,
                                 const ember::Tensor& y) {
  for (int i = 0; i < steps; ++i) {
    ember::Tensor loss = nn::GPT::loss(model.forward(x), y);
    loss.backward();
    optimizer.step();
    optimizer.zero_grad();
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 30;
  const std::int64_t batch = argc > 2 ? std::atoll(argv[2]) : 32;
  const int warm_up = argc > 3 ? std::atoi(argv[3]) : 5;
  if (argc > 4) ember::set_num_threads(std::atoi(argv[4]));
  ember::manual_seed(0);
  nn::GPTConfig config{.vocab_size = 65, .block_size = 64, .n_layer = 2, .n_head = 4, .n_embd = 128};
  nn::GPT model(config);
  std::vector<ember::Tensor> decay, no_decay;
  for (const auto& [name, parameter] : model.named_parameters())
    (parameter.dim() >= 2 ? decay : no_decay).push_back(parameter);
  ember::optim::AdamW optimizer({{.params = decay, .weight_decay = 0.1}, {.params = no_decay, .weight_decay = 0.0}},
                                {.lr = 1e-3, .beta1 = 0.9, .beta2 = 0.95});
  const auto ids = ember::TensorOptions().dtype(ember::kInt64);
  const ember::Tensor x = ember::randint(0, config.vocab_size, {batch, config.block_size}, ids);
  const ember::Tensor y = ember::randint(0, config.vocab_size, {batch, config.block_size}, ids);
  model.train();
  run_steps(warm_up, model, optimizer, x, y);

  std::vector<double> step_seconds, cpu_seconds;
  for (int i = 0; i < steps; ++i) {
    const auto start = Clock::now();
    const std::clock_t cpu_start = std::clock();
    run_steps(1, model, optimizer, x, y);
    cpu_seconds.push_back(static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC);
    step_seconds.push_back(seconds_since(start));
  }
  const double tokens = static_cast<double>(batch * config.block_size);
  const double step = median(step_seconds);
  const double fastest = *std::min_element(step_seconds.begin(), step_seconds.end());
  std::printf("GPT step (2 layers, 4 heads, width 128, T 64), batch %lld, %d threads: median %.3f ms "
              "(%.0f tokens/s), fastest %.3f ms (%.0f tokens/s)\n",
              static_cast<long long>(batch), ember::get_num_threads(), step * 1e3, tokens / step, fastest * 1e3,
              tokens / fastest);
  // CPU time (all threads) per step: on a shared machine, with one thread, a steadier measure
  // than the wall clock, which counts the time another process held the core.
  std::printf("  CPU time per step: median %.3f ms (%.0f tokens per CPU-second)\n", median(cpu_seconds) * 1e3,
              tokens / median(cpu_seconds));

  std::vector<double> forward_seconds;
  for (int i = 0; i < steps; ++i) {
    const auto start = Clock::now();
    ember::Tensor loss = nn::GPT::loss(model.forward(x), y);
    forward_seconds.push_back(seconds_since(start));
    loss.backward();
    optimizer.zero_grad();
  }
  const double forward = median(forward_seconds);
  std::printf("  forward + loss %8.3f ms %5.1f%%; backward + AdamW the rest\n", forward * 1e3, 100 * forward / step);
  return 0;
}
