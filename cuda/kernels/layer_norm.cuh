// cuda/kernels/layer_norm.cuh — layer norm forward and backward on the GPU (plans:
// core/layer_norm_plan.h; the CPU's twins: core/cpu/layer_norm_kernels.cpp).
//
// One block per row (grid-stride over rows); the block's threads stride over the row's
// row_size contiguous values, so consecutive threads read consecutive addresses.
//   forward:  pass 1  Σx (block_reduce)            -> mean
//             pass 2  Σ(x - mean)² (block_reduce)  -> rstd = 1 / sqrt(var + eps); thread 0
//                     writes mean and rstd
//             pass 3  y = (x - mean) · rstd · weight + bias
//   backward: layer_norm_input_grad_kernel, one block per row:
//             pass 1  Σg and Σg·x̂ together (block_reduce of a pair), g = dy · weight
//             pass 2  dx = rstd · (g - Σg/N - x̂ · Σg·x̂/N)
//             layer_norm_param_grad_kernel, one thread per column j (grid-stride): walks the
//             rows in order, grad_weight[j] = Σ dy·x̂, grad_bias[j] = Σ dy; neighbouring
//             threads read neighbouring columns of a row, so every load is coalesced.
// Statistics accumulate in the element type (fp32 for float, as PyTorch's CUDA kernel and
// the CPU kernel do; fp64 for double), in a fixed order, so results are reproducible run
// to run; they differ from the CPU's lane sums only by rounding. Bound: memory bandwidth —
// the forward reads a row three times (the second and third from L1/L2: a row is at most a
// few tens of KB in practice) and writes it once. Rows shorter than 32 values leave most of
// a 32-thread block idle; a warp-per-row variant is the next step if that shows in a profile.
#pragma once

#include <cstdint>

#include <ember/core/element_math.h>
#include <ember/core/layer_norm_plan.h>
#include <ember/cuda/kernels/block_reduce.cuh>

EMBER_KERNELS_BEGIN

using ::ember::LayerNormBackwardPlan;
using ::ember::LayerNormPlan;

// Two sums of the accumulation type folded across the block.
template <class Acc>
struct LayerNormSums {
  Acc first;
  Acc second;
  EMBER_DEVICE LayerNormSums shuffle_down(unsigned delta) const {
    return LayerNormSums{warp_shfl_down(first, delta), warp_shfl_down(second, delta)};
  }
};
struct LayerNormSumsCombine {
  template <class Acc>
  EMBER_DEVICE LayerNormSums<Acc> operator()(LayerNormSums<Acc> a, LayerNormSums<Acc> b) const {
    return LayerNormSums<Acc>{a.first + b.first, a.second + b.second};
  }
};

template <class T>
EMBER_GLOBAL void layer_norm_forward_kernel(LayerNormPlan plan) {
  EMBER_SHARED_ARRAY(LayerNormSums<T>, scratch, kMaxBlockReduceWarps + 1);
  const LayerNormSumsCombine combine;
  const LayerNormSums<T> identity{T(0), T(0)};
  const std::int64_t n = plan.row_size;
  const T* weight = static_cast<const T*>(plan.weight);
  const T* bias = static_cast<const T*>(plan.bias);
  for (std::int64_t row = blockIdx.x; row < plan.rows; row += gridDim.x) {
    const T* x = static_cast<const T*>(plan.input) + row * n;
    T* y = static_cast<T*>(plan.output) + row * n;
    LayerNormSums<T> partial = identity;
    for (std::int64_t j = threadIdx.x; j < n; j += blockDim.x) partial.first += x[j];
    const T mean = block_reduce(partial, combine, identity, scratch).first / static_cast<T>(n);
    partial = identity;
    for (std::int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      const T deviation = x[j] - mean;
      partial.first += deviation * deviation;
    }
    const T variance = block_reduce(partial, combine, identity, scratch).first / static_cast<T>(n);
    const T rstd = T(1) / math::sqrt(variance + static_cast<T>(plan.eps));
    if (threadIdx.x == 0) {
      static_cast<T*>(plan.mean)[row] = mean;
      static_cast<T*>(plan.rstd)[row] = rstd;
    }
    for (std::int64_t j = threadIdx.x; j < n; j += blockDim.x)
      y[j] = (x[j] - mean) * rstd * (weight != nullptr ? weight[j] : T(1)) + (bias != nullptr ? bias[j] : T(0));
  }
}

template <class T>
EMBER_GLOBAL void layer_norm_input_grad_kernel(LayerNormBackwardPlan plan) {
  EMBER_SHARED_ARRAY(LayerNormSums<T>, scratch, kMaxBlockReduceWarps + 1);
  const LayerNormSumsCombine combine;
  const LayerNormSums<T> identity{T(0), T(0)};
  const std::int64_t n = plan.row_size;
  const T* weight = static_cast<const T*>(plan.weight);
  for (std::int64_t row = blockIdx.x; row < plan.rows; row += gridDim.x) {
    const T* x = static_cast<const T*>(plan.input) + row * n;
    const T* dy = static_cast<const T*>(plan.grad_output) + row * n;
    T* dx = static_cast<T*>(plan.grad_input) + row * n;
    const T mean = static_cast<const T*>(plan.mean)[row];
    const T rstd = static_cast<const T*>(plan.rstd)[row];
    LayerNormSums<T> partial = identity;  // (Σg, Σg·x̂)
    for (std::int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      const T g = weight != nullptr ? dy[j] * weight[j] : dy[j];
      partial.first += g;
      partial.second += g * ((x[j] - mean) * rstd);
    }
    const LayerNormSums<T> sums = block_reduce(partial, combine, identity, scratch);
    const T mean_g = sums.first / static_cast<T>(n), mean_gx = sums.second / static_cast<T>(n);
    for (std::int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      const T g = weight != nullptr ? dy[j] * weight[j] : dy[j];
      dx[j] = (g - mean_g - (x[j] - mean) * rstd * mean_gx) * rstd;
    }
  }
}

template <class T>
EMBER_GLOBAL void layer_norm_param_grad_kernel(LayerNormBackwardPlan plan) {
  const std::int64_t n = plan.row_size;
  const T* x = static_cast<const T*>(plan.input);
  const T* dy = static_cast<const T*>(plan.grad_output);
  const T* mean = static_cast<const T*>(plan.mean);
  const T* rstd = static_cast<const T*>(plan.rstd);
  for (std::int64_t j = global_thread_index(); j < n; j += grid_thread_count()) {
    T sum_dyx = T(0), sum_dy = T(0);
    for (std::int64_t i = 0; i < plan.rows; ++i) {
      const T g = dy[i * n + j];
      sum_dyx += g * ((x[i * n + j] - mean[i]) * rstd[i]);
      sum_dy += g;
    }
    if (plan.grad_weight != nullptr) static_cast<T*>(plan.grad_weight)[j] = sum_dyx;
    if (plan.grad_bias != nullptr) static_cast<T*>(plan.grad_bias)[j] = sum_dy;
  }
}

inline void dispatch_layer_norm(const LayerNormPlan& plan, cudaStream_t stream) {
  if (plan.rows == 0 || plan.row_size == 0) return;
  EMBER_DISPATCH_FLOATING(plan.dtype, {
    auto kernel = &layer_norm_forward_kernel<scalar_t>;
    EMBER_LAUNCH(kernel, dim3(blocks_for(plan.rows, 1)), dim3(reduce_block_threads(plan.row_size)), stream, plan);
  });
}

inline void dispatch_layer_norm_backward(const LayerNormBackwardPlan& plan, cudaStream_t stream) {
  if (plan.rows == 0 || plan.row_size == 0) return;
  constexpr int kColumnThreads = 256;
  EMBER_DISPATCH_FLOATING(plan.dtype, {
    if (plan.grad_input != nullptr) {
      auto kernel = &layer_norm_input_grad_kernel<scalar_t>;
      EMBER_LAUNCH(kernel, dim3(blocks_for(plan.rows, 1)), dim3(reduce_block_threads(plan.row_size)), stream, plan);
    }
    if (plan.grad_weight != nullptr || plan.grad_bias != nullptr) {
      auto kernel = &layer_norm_param_grad_kernel<scalar_t>;
      EMBER_LAUNCH(kernel, dim3(blocks_for(plan.row_size, kColumnThreads)), dim3(kColumnThreads), stream, plan);
    }
  });
}

EMBER_KERNELS_END
