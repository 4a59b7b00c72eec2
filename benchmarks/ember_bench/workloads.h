// benchmarks/ember_bench/workloads.h — the catalogue of figures ember-bench measures.
//
// One list, built once, shared by ember, the library peers and the PyTorch peer, so that
// every implementation runs exactly the same shapes. --quick picks small sizes only.
#pragma once

#include <cstdint>
#include <vector>

#include "bench_types.h"

namespace ember_bench {

std::vector<Workload> build_workloads(bool quick);

// The MLPs of the end-to-end figures (input width first, classes last).
std::vector<std::int64_t> model_layers(const std::string& model);
// Multiply-adds of one forward pass per example: sum of in*out over the Linear layers.
double model_macs_per_example(const std::vector<std::int64_t>& layers);
// Number of parameters (weights and biases).
double model_parameters(const std::vector<std::int64_t>& layers);

}  // namespace ember_bench
