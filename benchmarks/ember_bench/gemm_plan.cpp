// benchmarks/ember_bench/gemm_plan.cpp — which GEMMs a convolution and a training step are.
#include "gemm_plan.h"

#include <algorithm>
#include <stdexcept>

#include "workloads.h"

namespace ember_bench {
namespace {

// One convolution through im2col, the batch's columns side by side: per group, the weight
// W [Cout/g, K] (K = Cin/g·kH·kW) and the columns [K, N·Hout·Wout].
void add_conv(std::vector<GemmCall>& plan, std::int64_t batch, std::int64_t c_in, std::int64_t h, std::int64_t width,
              std::int64_t c_out, std::int64_t kh, std::int64_t kw, std::int64_t stride, std::int64_t padding,
              std::int64_t dilation, std::int64_t groups, bool backward, bool input_gradient) {
  const std::int64_t columns = batch * conv_output_size(h, kh, stride, padding, dilation) *
                               conv_output_size(width, kw, stride, padding, dilation);
  const std::int64_t rows = c_in / groups * kh * kw, filters = c_out / groups;
  plan.push_back({.m = filters, .k = rows, .n = columns, .count = groups});  // Y = W · col
  if (!backward) return;
  plan.push_back({.m = filters, .k = columns, .n = rows, .transpose_b = true, .count = groups});  // dW = dY · colᵀ
  if (input_gradient)
    plan.push_back({.m = rows, .k = filters, .n = columns, .transpose_a = true, .count = groups});  // dcol = Wᵀ · dY
}

// nn.Linear layers (W is out x in): forward Y = X·Wᵀ, weight gradient dYᵀ·X, input gradient
// dY·W except for the first layer when the network's input needs none.
void add_linear_layers(std::vector<GemmCall>& plan, const std::vector<std::int64_t>& layers, std::int64_t batch,
                       bool first_needs_input_gradient) {
  for (std::size_t i = 0; i + 1 < layers.size(); ++i)
    plan.push_back({.m = batch, .k = layers[i], .n = layers[i + 1], .transpose_b = true});
  for (std::size_t i = layers.size() - 1; i-- > 0;) {
    plan.push_back({.m = layers[i + 1], .k = batch, .n = layers[i], .transpose_a = true});
    if (i > 0 || first_needs_input_gradient) plan.push_back({.m = batch, .k = layers[i + 1], .n = layers[i]});
  }
}

}  // namespace

std::vector<GemmCall> gemm_plan(const Workload& w, std::int64_t batch) {
  std::vector<GemmCall> plan;
  if (w.group == "conv2d") {
    const auto& d = w.dims;  // N, Cin, H, W, Cout, kH, kW, stride, padding, dilation, groups
    add_conv(plan, batch, d[1], d[2], d[3], d[4], d[5], d[6], d[7], d[8], d[9], d[10], w.op == "forward_backward", true);
    return plan;
  }
  if (w.group != "train_step" && w.group != "train_epoch")
    throw std::invalid_argument("ember-bench: no GEMM plan for " + w.id);
  if (w.model != "cnn") {
    add_linear_layers(plan, w.layers, batch, false);
    return plan;
  }
  // The CNN (dims C, H, W, C1, C2): forwards in order, then the gradients last layer first.
  const auto& d = w.dims;
  std::vector<GemmCall> conv1, conv2, head;
  add_conv(conv1, batch, d[0], d[1], d[2], d[3], 3, 3, 1, 1, 1, 1, true, false);
  add_conv(conv2, batch, d[3], d[1] / 2, d[2] / 2, d[4], 3, 3, 1, 1, 1, 1, true, true);
  add_linear_layers(head, w.layers, batch, true);
  const std::size_t head_forwards = w.layers.size() - 1;
  plan.push_back(conv1[0]);
  plan.push_back(conv2[0]);
  plan.insert(plan.end(), head.begin(), head.begin() + static_cast<std::ptrdiff_t>(head_forwards));
  plan.insert(plan.end(), head.begin() + static_cast<std::ptrdiff_t>(head_forwards), head.end());
  plan.insert(plan.end(), conv2.begin() + 1, conv2.end());
  plan.insert(plan.end(), conv1.begin() + 1, conv1.end());
  return plan;
}

std::vector<std::int64_t> plan_batches(const Workload& w) {
  if (w.group == "conv2d") return {w.dims[0]};
  if (w.group != "train_epoch") return {w.batch};
  std::vector<std::int64_t> batches;
  for (std::int64_t start = 0; start < w.examples; start += w.batch) batches.push_back(std::min(w.batch, w.examples - start));
  return batches;
}

double gemm_plan_flops(const std::vector<GemmCall>& plan) {
  double flops = 0;
  for (const auto& call : plan) flops += 2.0 * call.m * call.k * call.n * call.count;
  return flops;
}

}  // namespace ember_bench
