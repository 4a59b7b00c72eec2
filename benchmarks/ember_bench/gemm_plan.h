// benchmarks/ember_bench/gemm_plan.h — the GEMMs a figure reduces to: the ceilings of the
// convolution and training figures.
//
// A convolution computed through im2col is one GEMM per pass (forward; weight gradient;
// input gradient), and a training step is its layers' GEMMs. Run back to back by the BLAS
// (cpu_peers.h: OpenBLAS; cuda_support.h: cuBLAS) with nothing else — no im2col, bias, ReLU,
// pooling, loss, autograd, optimizer or allocation — they time what the figure would take if
// it were all GEMM at the library's speed: its ceiling. Device-independent, like Workload.
#pragma once

#include <cstdint>
#include <vector>

#include "bench_types.h"

namespace ember_bench {

// Row-major C[m x n] = op(A)[m x k] · op(B)[k x n], run `count` times (once per group);
// op(A) = Aᵀ when transpose_a (A stored k x m), likewise for B.
struct GemmCall {
  std::int64_t m = 0, k = 0, n = 0;
  bool transpose_a = false, transpose_b = false;
  std::int64_t count = 1;
};

// The GEMMs of one call of `w` over `batch` examples: a conv2d figure (forward, and for
// forward_backward the weight and input gradients, the whole batch as one GEMM per group);
// one training step of a train_step / train_epoch figure's model (MLP or CNN; the first
// layer's input needs no gradient, so it gets none). Throws for other groups.
std::vector<GemmCall> gemm_plan(const Workload& w, std::int64_t batch);

// The batch of each call's steps: one (the figure's batch) for a conv2d or train_step figure;
// an epoch's full batches, then its last partial one (as the DataLoader, drop_last false).
std::vector<std::int64_t> plan_batches(const Workload& w);

// 2·m·k·n·count summed over the plan.
double gemm_plan_flops(const std::vector<GemmCall>& plan);

}  // namespace ember_bench
