// cuda/kernels/batch_norm.cuh — batch norm forward and backward on the GPU (plans:
// core/batch_norm_plan.h; the CPU's twins: core/cpu/batch_norm_kernels.cpp).
//
// One block per channel (grid-stride over channels). A channel's count = batch · inner values
// sit in `batch` runs of `inner` contiguous elements; the block's threads stride over the
// channel's values k = 0 .. count-1 (n = k / inner, i = k % inner), so consecutive threads
// read consecutive addresses within a run.
//   forward:  pass 1  Σx (block_reduce)            -> mean
//             pass 2  Σ(x - mean)² (block_reduce)  -> invstd; thread 0 writes save_mean,
//                     save_invstd and mixes the running statistics (unbiased variance)
//             pass 3  y = x · α + β                  (eval: pass 3 only, from the running ones)
//   backward: pass 1  Σdy and Σ(x - mean)·dy together (block_reduce of a pair); thread 0
//                     writes grad_weight, grad_bias
//             pass 2  dx = (dy - Σdy/count - (x - mean)·k) · invstd · weight
// Sums accumulate in double for both dtypes (PyTorch's CPU kernels do too), in a fixed
// order, so results are reproducible run to run; they differ from the CPU's sequential
// sums only by rounding. Bound: memory bandwidth — the forward reads x three times (the
// second and third mostly from L2 for channels up to a few MB) and writes y once; the
// backward reads x and dy twice and writes dx once. Few channels with many values each
// use few SMs; a channel-split reduction is the next step if that shows in a profile.
#pragma once

#include <cmath>
#include <cstdint>

#include <ember/core/batch_norm_plan.h>
#include <ember/core/element_math.h>
#include <ember/cuda/kernels/block_reduce.cuh>

EMBER_KERNELS_BEGIN

using ::ember::BatchNormBackwardPlan;
using ::ember::BatchNormPlan;

// A pair of double sums folded across the block.
struct SumPair {
  double first;
  double second;
  EMBER_DEVICE SumPair shuffle_down(unsigned delta) const {
    return SumPair{warp_shfl_down(first, delta), warp_shfl_down(second, delta)};
  }
};
struct SumPairCombine {
  EMBER_DEVICE SumPair operator()(SumPair a, SumPair b) const { return SumPair{a.first + b.first, a.second + b.second}; }
};

// Offset of a channel's k-th value in the [batch, channels, inner] layout.
EMBER_DEVICE std::int64_t channel_offset(std::int64_t k, std::int64_t c, std::int64_t channels, std::int64_t inner) {
  const std::int64_t n = k / inner, i = k - n * inner;
  return (n * channels + c) * inner + i;
}

template <class T>
EMBER_GLOBAL void batch_norm_forward_kernel(BatchNormPlan plan) {
  EMBER_SHARED_ARRAY(SumPair, scratch, kMaxBlockReduceWarps + 1);
  const SumPairCombine combine;
  const SumPair identity{0.0, 0.0};
  const T* x = static_cast<const T*>(plan.input);
  T* y = static_cast<T*>(plan.output);
  const std::int64_t channels = plan.channels, inner = plan.inner, count = plan.batch * plan.inner;
  for (std::int64_t c = blockIdx.x; c < channels; c += gridDim.x) {
    T mean, invstd;
    if (plan.training) {
      SumPair partial = identity;
      for (std::int64_t k = threadIdx.x; k < count; k += blockDim.x)
        partial.first += static_cast<double>(x[channel_offset(k, c, channels, inner)]);
      const double sum = block_reduce(partial, combine, identity, scratch).first;
      mean = count > 0 ? static_cast<T>(sum / static_cast<double>(count)) : T(0);
      partial = identity;
      for (std::int64_t k = threadIdx.x; k < count; k += blockDim.x) {
        const T deviation = x[channel_offset(k, c, channels, inner)] - mean;
        partial.first += static_cast<double>(deviation * deviation);
      }
      const T var_sum = static_cast<T>(block_reduce(partial, combine, identity, scratch).first);
      const double variance = static_cast<double>(static_cast<T>(var_sum / static_cast<T>(count)));
      invstd = variance == 0.0 && plan.eps == 0.0 ? T(0) : static_cast<T>(1.0 / math::sqrt(variance + plan.eps));
      if (threadIdx.x == 0) {
        if (plan.running_mean != nullptr) {
          T* running_mean = static_cast<T*>(plan.running_mean);
          running_mean[c] = static_cast<T>(plan.momentum * mean + (1.0 - plan.momentum) * running_mean[c]);
        }
        if (plan.running_var != nullptr) {
          T* running_var = static_cast<T*>(plan.running_var);
          const T unbiased = static_cast<T>(var_sum / static_cast<T>(count - 1));
          running_var[c] = static_cast<T>(plan.momentum * unbiased + (1.0 - plan.momentum) * running_var[c]);
        }
      }
    } else {
      mean = static_cast<const T*>(plan.running_mean)[c];
      invstd = T(1) / math::sqrt(static_cast<const T*>(plan.running_var)[c] + static_cast<T>(plan.eps));
    }
    if (threadIdx.x == 0) {
      static_cast<T*>(plan.save_mean)[c] = mean;
      static_cast<T*>(plan.save_invstd)[c] = invstd;
    }
    const T alpha = invstd * (plan.weight != nullptr ? static_cast<const T*>(plan.weight)[c] : T(1));
    const T beta = (plan.bias != nullptr ? static_cast<const T*>(plan.bias)[c] : T(0)) - mean * alpha;
    for (std::int64_t k = threadIdx.x; k < count; k += blockDim.x) {
      const std::int64_t e = channel_offset(k, c, channels, inner);
      y[e] = x[e] * alpha + beta;
    }
  }
}

template <class T>
EMBER_GLOBAL void batch_norm_backward_kernel(BatchNormBackwardPlan plan) {
  EMBER_SHARED_ARRAY(SumPair, scratch, kMaxBlockReduceWarps + 1);
  const SumPairCombine combine;
  const SumPair identity{0.0, 0.0};
  const T* x = static_cast<const T*>(plan.input);
  const T* dy = static_cast<const T*>(plan.grad_output);
  T* dx = static_cast<T*>(plan.grad_input);
  const std::int64_t channels = plan.channels, inner = plan.inner, count = plan.batch * plan.inner;
  for (std::int64_t c = blockIdx.x; c < channels; c += gridDim.x) {
    const T mean = static_cast<const T*>(plan.save_mean)[c];
    const T invstd = static_cast<const T*>(plan.save_invstd)[c];
    SumPair partial = identity;  // (Σdy, Σ(x - mean)·dy)
    for (std::int64_t k = threadIdx.x; k < count; k += blockDim.x) {
      const std::int64_t e = channel_offset(k, c, channels, inner);
      partial.first += static_cast<double>(dy[e]);
      partial.second += static_cast<double>((x[e] - mean) * dy[e]);
    }
    const SumPair sums = block_reduce(partial, combine, identity, scratch);
    if (threadIdx.x == 0) {
      if (plan.grad_weight != nullptr) static_cast<T*>(plan.grad_weight)[c] = static_cast<T>(sums.second * invstd);
      if (plan.grad_bias != nullptr) static_cast<T*>(plan.grad_bias)[c] = static_cast<T>(sums.first);
    }
    if (dx == nullptr || count == 0) continue;
    const T scale = invstd * (plan.weight != nullptr ? static_cast<const T*>(plan.weight)[c] : T(1));
    const T k_term = static_cast<T>(sums.second * invstd * invstd / static_cast<double>(count));
    const T grad_mean = static_cast<T>(sums.first / static_cast<double>(count));
    for (std::int64_t k = threadIdx.x; k < count; k += blockDim.x) {
      const std::int64_t e = channel_offset(k, c, channels, inner);
      dx[e] = plan.training ? (dy[e] - grad_mean - (x[e] - mean) * k_term) * scale : dy[e] * scale;
    }
  }
}

inline void dispatch_batch_norm(const BatchNormPlan& plan, cudaStream_t stream) {
  if (plan.channels == 0) return;
  EMBER_DISPATCH_FLOATING(plan.dtype, {
    auto kernel = &batch_norm_forward_kernel<scalar_t>;
    EMBER_LAUNCH(kernel, dim3(blocks_for(plan.channels, 1)), dim3(reduce_block_threads(plan.batch * plan.inner)),
                 stream, plan);
  });
}

inline void dispatch_batch_norm_backward(const BatchNormBackwardPlan& plan, cudaStream_t stream) {
  if (plan.channels == 0) return;
  EMBER_DISPATCH_FLOATING(plan.dtype, {
    auto kernel = &batch_norm_backward_kernel<scalar_t>;
    EMBER_LAUNCH(kernel, dim3(blocks_for(plan.channels, 1)), dim3(reduce_block_threads(plan.batch * plan.inner)),
                 stream, plan);
  });
}

EMBER_KERNELS_END
