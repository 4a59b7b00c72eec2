// benchmarks/attention_profile.cpp — times F::scaled_dot_product_attention's forward and
// forward + backward on [1, 8, T, 64] causal heads, on the fused kernel or the composite, so
// that the CPU attention kernel (core/cpu/flash_attention_kernels.cpp) can be tuned outside
// ember-bench's harness: the median of the timed calls, and the user CPU time per call (less
// disturbed than wall time when other processes share the cores). Run it under
// `perf record` or `perf stat -e cycles:u` to see where a call goes.
// Usage: attention_profile [T=1024] [calls=10] [threads=all] [path=fused|composite] [heads=8]
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <ember/core/parallel.h>
#include <ember/ember.h>

namespace nn = ember::nn;
namespace F = ember::nn::functional;
using Clock = std::chrono::steady_clock;

namespace {

double user_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec) + 1e-6 * static_cast<double>(usage.ru_utime.tv_usec);
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t time = argc > 1 ? std::atoll(argv[1]) : 1024;
  const int calls = argc > 2 ? std::atoi(argv[2]) : 10;
  if (argc > 3 && std::atoi(argv[3]) > 0) ember::set_num_threads(std::atoi(argv[3]));
  const std::string path = argc > 4 ? argv[4] : "fused";
  const std::int64_t heads = argc > 5 ? std::atoll(argv[5]) : 8;
  nn::SdpaKernelGuard only(path == "composite" ? nn::SDPBackend::Math : nn::SDPBackend::FlashAttention);
  ember::manual_seed(1);
  ember::Tensor q = ember::rand({1, heads, time, 64}) - 0.5, k = ember::rand({1, heads, time, 64}) - 0.5,
                v = ember::rand({1, heads, time, 64}) - 0.5, grad = ember::rand({1, heads, time, 64}) - 0.5;
  for (ember::Tensor* t : {&q, &k, &v}) t->requires_grad_(true);
  auto run = [&](bool backward) {
    std::vector<double> wall;
    const double user_start = user_seconds();
    for (int i = 0; i < calls + 1; ++i) {
      for (ember::Tensor* t : {&q, &k, &v}) t->mutable_grad() = ember::Tensor();
      const auto start = Clock::now();
      if (backward) {
        F::scaled_dot_product_attention(q, k, v, {}, 0.0, true).backward(grad);
      } else {
        ember::NoGradGuard no_grad;
        (void)F::scaled_dot_product_attention(q, k, v, {}, 0.0, true);
      }
      if (i > 0) wall.push_back(std::chrono::duration<double>(Clock::now() - start).count());  // call 0: warm-up
    }
    std::printf("%-9s T=%lld %s: median %.3f ms, user CPU %.3f ms per call (%d threads)\n", path.c_str(),
                static_cast<long long>(time), backward ? "fwd+bwd" : "fwd    ", 1e3 * median(wall),
                1e3 * (user_seconds() - user_start) / (calls + 1), ember::get_num_threads());
  };
  run(false);
  run(true);
  return 0;
}
