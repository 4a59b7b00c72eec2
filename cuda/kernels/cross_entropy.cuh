// cuda/kernels/cross_entropy.cuh — fused cross-entropy forward + backward over [rows, classes].
//
// cross_entropy(x, t) = logsumexp(x_row) - x_row[t], and its gradient with respect to the
// logits is (softmax(x_row) - one_hot(t)) · scale. Unfused, that is log_softmax (read x,
// write y), nll (read y) and backward (write a one-hot gradient, read it and y, write dx):
// several passes over [rows, classes]. Fused (the backend's cross_entropy,
// CrossEntropyPlan in core/fused_plans.h): one block per row does
//   pass 1  the online max-and-sum of softmax.cuh (m, s = Σ exp(x - m)); the block
//           combines the threads' (m, s) pairs with block_reduce;
//   write   loss[row] = m + log(s) - x[t]    (thread 0; one extra element read);
//   pass 2  dx[c] = (exp(x[c] - m) / s - [c == t]) · scale.
// Logits read once: while loading pass 1, each thread keeps its elements (c = thread,
// thread + blockDim, …) in registers, up to kCrossEntropyHeld of them — rows of up to
// 256 × 8 = 2048 classes (a classifier's logits) — and pass 2 computes from registers.
// Longer rows (a language model's vocabulary) re-read the row in pass 2 (mostly from L2).
// An ignored row (t == ignore_index) is not read at all: loss 0, gradient 0. scale is
// 1 / (non-ignored rows) for the mean reduction, else 1; the backward multiplies the
// saved gradient by grad_output. dx may be nullptr (forward only: loss, no gradient).
//
//        classes →
//   row 0 ┌──────────────────────┐  block 0: threads stride over the row (t, t + blockDim, …)
//   row 1 ├──────────────────────┤  block 1
//    …    └──────────────────────┘  (grid-stride over rows when rows > 65535)
// Bound: memory bandwidth — 1 read + 1 write of rows × classes × itemsize for rows held in
// registers (1 read without dx), 2 reads + 1 write for longer rows.
#pragma once

#include <cstdint>

#include <ember/core/fused_plans.h>
#include <ember/cuda/kernels/softmax.cuh>

EMBER_KERNELS_BEGIN

using ::ember::CrossEntropyPlan;

constexpr int kCrossEntropyHeld = 8;  // logits each thread keeps in registers between the passes

// The held values stay in registers only if the loops over them are fully unrolled (a
// dynamically indexed array goes to local memory); the host compiler needs no hint.
#if defined(__CUDACC__)
#define EMBER_CROSS_ENTROPY_UNROLL _Pragma("unroll")
#else
#define EMBER_CROSS_ENTROPY_UNROLL
#endif

template <class T>
EMBER_GLOBAL void cross_entropy_kernel(CrossEntropyPlan plan) {
  EMBER_SHARED_ARRAY(MaxSum<T>, scratch, kMaxBlockReduceWarps + 1);
  const MaxSumCombine<T> combine;
  const MaxSum<T> identity{static_cast<T>(-INFINITY), T(0)};
  const T scale = static_cast<T>(plan.scale);
  const std::int64_t classes = plan.classes;
  const bool held = classes <= static_cast<std::int64_t>(blockDim.x) * kCrossEntropyHeld;
  for (std::int64_t row = blockIdx.x; row < plan.rows; row += gridDim.x) {
    const T* x = static_cast<const T*>(plan.logits) + row * classes;
    T* dx = plan.grad_logits == nullptr ? nullptr : static_cast<T*>(plan.grad_logits) + row * classes;
    const std::int64_t target = plan.targets[row];
    if (target == plan.ignore_index) {  // the whole block takes this branch: no barrier is skipped unevenly
      if (threadIdx.x == 0) static_cast<T*>(plan.losses)[row] = T(0);
      if (dx != nullptr)
        for (std::int64_t c = threadIdx.x; c < classes; c += blockDim.x) dx[c] = T(0);
      continue;
    }
    T values[kCrossEntropyHeld];
    MaxSum<T> partial = identity;
    if (held) {
      EMBER_CROSS_ENTROPY_UNROLL
      for (int j = 0; j < kCrossEntropyHeld; ++j) {
        const std::int64_t c = threadIdx.x + static_cast<std::int64_t>(j) * blockDim.x;
        values[j] = c < classes ? x[c] : T(0);
        if (c < classes) partial = combine(partial, MaxSum<T>{values[j], T(1)});
      }
    } else {
      for (std::int64_t c = threadIdx.x; c < classes; c += blockDim.x)
        partial = combine(partial, MaxSum<T>{x[c], T(1)});
    }
    const MaxSum<T> total = block_reduce(partial, combine, identity, scratch);
    if (threadIdx.x == 0) static_cast<T*>(plan.losses)[row] = total.max + math::log(total.sum) - x[target];
    if (dx == nullptr) continue;
    auto gradient = [&](std::int64_t c, T value) {
      return (math::exp(value - total.max) / total.sum - (c == target ? T(1) : T(0))) * scale;
    };
    if (held) {
      EMBER_CROSS_ENTROPY_UNROLL
      for (int j = 0; j < kCrossEntropyHeld; ++j) {
        const std::int64_t c = threadIdx.x + static_cast<std::int64_t>(j) * blockDim.x;
        if (c < classes) dx[c] = gradient(c, values[j]);
      }
    } else {
      for (std::int64_t c = threadIdx.x; c < classes; c += blockDim.x) dx[c] = gradient(c, x[c]);
    }
  }
}

inline void dispatch_cross_entropy(const CrossEntropyPlan& plan, cudaStream_t stream) {
  if (plan.rows == 0) return;
  EMBER_DISPATCH_FLOATING(plan.dtype, {
    auto kernel = &cross_entropy_kernel<scalar_t>;
    EMBER_LAUNCH(kernel, dim3(blocks_for(plan.rows, 1)), dim3(reduce_block_threads(plan.classes)), stream, plan);
  });
}

EMBER_KERNELS_END

#undef EMBER_CROSS_ENTROPY_UNROLL
