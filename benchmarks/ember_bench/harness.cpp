// benchmarks/ember_bench/harness.cpp — warm-up, calibration, repetitions, median.
#include "harness.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace ember_bench {
namespace {

class CpuTimer : public Timer {
 public:
  void start() override { begin_ = std::chrono::steady_clock::now(); }
  double stop() override {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin_).count();
  }

 private:
  std::chrono::steady_clock::time_point begin_;
};

double time_calls(const std::function<void()>& body, int calls, Timer& timer) {
  timer.start();
  for (int i = 0; i < calls; ++i) body();
  return timer.stop();
}

}  // namespace

std::unique_ptr<Timer> make_cpu_timer() { return std::make_unique<CpuTimer>(); }

Measurement measure(const std::function<void()>& body, const Policy& policy, Timer& timer) {
  Measurement result;
  // The first call is timed on its own: it tells how long one call takes (cold caches,
  // allocator growth and library set-up included, which is why it is not a sample).
  const double first = time_calls(body, 1, timer);
  if (first >= policy.max_seconds) {
    result.samples.push_back(first);
    result.cold_single_sample = true;
    return result;
  }
  for (int i = 1; i < policy.warmup; ++i) time_calls(body, 1, timer);
  // Then keep calling for min_warmup_seconds: on this VM a peer measured just before (OpenBLAS's
  // pool threads busy-wait ~0.1 s after their last call) or cores left idle can halve the
  // first tens of milliseconds of a multi-threaded figure, and a short figure's whole sampling
  // would fall inside that window (measured: ember's 128x256x784 GEMM at one thread's speed).
  for (double warmed = 0; warmed < policy.min_warmup_seconds;) warmed += time_calls(body, 1, timer);
  // Calls per sample so that one sample lasts at least min_sample_seconds (timer resolution
  // and launch jitter then stay small against it).
  double per_call = std::max(first, 1e-9);
  if (policy.warmup > 1) per_call = std::max(time_calls(body, 1, timer), 1e-9);
  const int calls = static_cast<int>(std::clamp(std::ceil(policy.min_sample_seconds / per_call), 1.0, 1e6));
  result.calls_per_sample = calls;
  double elapsed = 0;
  for (int rep = 0; rep < policy.reps; ++rep) {
    const double seconds = time_calls(body, calls, timer);
    result.samples.push_back(seconds / calls);
    elapsed += seconds;
    if (elapsed > policy.max_seconds && result.samples.size() >= 3) break;
  }
  return result;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  return values.size() % 2 ? values[middle] : 0.5 * (values[middle - 1] + values[middle]);
}

}  // namespace ember_bench
