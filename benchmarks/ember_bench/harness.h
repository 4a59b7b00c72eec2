// benchmarks/ember_bench/harness.h — ember-bench's own timing loop (no Google Benchmark).
//
// measure() runs a body under a Policy (bench_types.h): warm-up, calibration of how many
// calls one sample needs, then repetitions. The clock is a Timer: wall-clock for the CPU,
// CUDA events on the device's default stream for a GPU (cuda_support.h), so GPU samples time
// the kernels themselves and end with the device synchronised.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "bench_types.h"

namespace ember_bench {

class Timer {
 public:
  virtual ~Timer() = default;
  virtual void start() = 0;
  virtual double stop() = 0;  // seconds since start(); waits for the device's work to finish
};

std::unique_ptr<Timer> make_cpu_timer();

struct Measurement {
  std::vector<double> samples;  // seconds per call
  int calls_per_sample = 1;
  bool cold_single_sample = false;
};

Measurement measure(const std::function<void()>& body, const Policy& policy, Timer& timer);

double median(std::vector<double> values);

}  // namespace ember_bench
