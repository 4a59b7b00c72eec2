// benchmarks/ember_bench/ember_runner.h — runs one Workload through ember's public API.
//
// Inputs are made before timing; the timed body is exactly what a user program writes
// (a.matmul(b), x + y, F::cross_entropy(...).backward(), optimizer.step(), a DataLoader
// loop), so the figures include ember's dispatch, allocation and autograd overheads.
#pragma once

#include <ember/core/device.h>

#include "bench_types.h"
#include "harness.h"

namespace ember_bench {

Measurement run_ember(const Workload& workload, const ember::Device& device, const Policy& policy, Timer& timer);

}  // namespace ember_bench
