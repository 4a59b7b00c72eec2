// cuda/kernels/cross_entropy.cuh — fused cross-entropy forward + backward over [rows, classes].
//
// cross_entropy(x, t) = logsumexp(x_row) - x_row[t], and its gradient with respect to the
// logits is (softmax(x_row) - one_hot(t)) · scale. Unfused, that is log_softmax (read x,
// write y), nll (read y) and backward (read y, write dx): three passes over the logits.
// Fused: one block per row does
//   pass 1  the online max-and-sum of softmax.cuh (m, s = Σ exp(x - m)) — the row is read
//           once, the block combines the threads' (m, s) pairs with block_reduce;
//   write   loss[row] = m + log(s) - x[t]   (0 for t == ignore_index);
//   pass 2  dx[c] = (exp(x[c] - m) / s - [c == t]) · scale   (0 for an ignored row),
// so the logits are read twice (the second read mostly hits L2 for rows that fit) and the
// gradient written once. scale is grad_output / (number of non-ignored rows) for the mean
// reduction, grad_output for sum — the host knows it before the launch (training calls
// forward and backward back to back; dx may be nullptr for a forward-only call).
//
//        classes →
//   row 0 ┌──────────────────────┐  block 0: threads stride over the row (t, t + blockDim, …)
//   row 1 ├──────────────────────┤  block 1
//    …    └──────────────────────┘  (grid-stride over rows when rows > 65535)
// Bound: memory bandwidth — 2 reads + 1 write of rows × classes × itemsize (1 read without dx).
// Status: exercised by the emulator tests (tests/cuda/test_fused_kernels.cpp); not yet a
// Backend method, so GPU cross_entropy still runs log_softmax + nll kernels (docs/cuda.md).
#pragma once

#include <cstdint>

#include <ember/cuda/kernels/softmax.cuh>

EMBER_KERNELS_BEGIN

struct CrossEntropyPlan {
  const void* logits = nullptr;        // [rows, classes], contiguous
  const std::int64_t* targets = nullptr;  // [rows], class indices (checked by the host)
  void* losses = nullptr;              // [rows]: each row's loss (0 when ignored)
  void* grad_logits = nullptr;         // [rows, classes] or nullptr (forward only)
  std::int64_t rows = 0, classes = 0;
  std::int64_t ignore_index = -100;
  double scale = 1.0;                  // multiplies every gradient entry
  DType dtype = DType::Float32;
};

template <class T>
EMBER_GLOBAL void cross_entropy_kernel(CrossEntropyPlan plan) {
  EMBER_SHARED_ARRAY(MaxSum<T>, scratch, kMaxBlockReduceWarps + 1);
  const MaxSumCombine<T> combine;
  const MaxSum<T> identity{static_cast<T>(-INFINITY), T(0)};
  const T scale = static_cast<T>(plan.scale);
  for (std::int64_t row = blockIdx.x; row < plan.rows; row += gridDim.x) {
    const T* x = static_cast<const T*>(plan.logits) + row * plan.classes;
    const std::int64_t target = plan.targets[row];
    const bool ignored = target == plan.ignore_index;
    MaxSum<T> partial = identity;
    for (std::int64_t c = threadIdx.x; c < plan.classes; c += blockDim.x) partial = combine(partial, MaxSum<T>{x[c], T(1)});
    const MaxSum<T> total = block_reduce(partial, combine, identity, scratch);
    if (threadIdx.x == 0)
      static_cast<T*>(plan.losses)[row] = ignored ? T(0) : total.max + math::log(total.sum) - x[target];
    if (plan.grad_logits == nullptr) continue;
    T* dx = static_cast<T*>(plan.grad_logits) + row * plan.classes;
    for (std::int64_t c = threadIdx.x; c < plan.classes; c += blockDim.x) {
      const T probability = math::exp(x[c] - total.max) / total.sum;
      dx[c] = ignored ? T(0) : (probability - (c == target ? T(1) : T(0))) * scale;
    }
  }
}

inline void dispatch_cross_entropy(const CrossEntropyPlan& plan, cudaStream_t stream) {
  if (plan.rows == 0 || plan.classes == 0) return;
  EMBER_DISPATCH_FLOATING(plan.dtype, {
    auto kernel = &cross_entropy_kernel<scalar_t>;
    EMBER_LAUNCH(kernel, dim3(blocks_for(plan.rows, 1)), dim3(reduce_block_threads(plan.classes)), stream, plan);
  });
}

EMBER_KERNELS_END
