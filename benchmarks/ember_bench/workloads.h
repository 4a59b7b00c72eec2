// benchmarks/ember_bench/workloads.h — the catalogue of figures ember-bench measures.
//
// One list, built once, shared by ember, the library peers and the PyTorch peer, so that
// every implementation runs exactly the same shapes. --quick picks small sizes only.
#pragma once

#include <cstdint>
#include <string>
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

// A convolution's (or pooling window's) output length along one axis, as PyTorch computes it.
std::int64_t conv_output_size(std::int64_t size, std::int64_t kernel, std::int64_t stride, std::int64_t padding,
                              std::int64_t dilation);
// The CNN of a `cnn` training workload (model "cnn"; dims C, H, W, C1, C2; layers its Linear
// head): multiply-adds of one example's forward pass, and its number of parameters.
double cnn_macs_per_example(const Workload& w);
double cnn_parameters(const Workload& w);

}  // namespace ember_bench
