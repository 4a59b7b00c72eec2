// cuda/kernels/sgd.cuh — one fused SGD step (PyTorch's torch.optim.SGD update) per parameter.
//
// For each element (SgdPlan in core/fused_plans.h has the whole formula):
//   d = maximize ? -grad : grad;  d = d + weight_decay · param
//   momentum == 0:  param = param - lr · d
//   otherwise:      buf = first_step ? d : momentum · buf + (1 - dampening) · d
//                   param = param - lr · (nesterov ? d + momentum · buf : buf)
// Unfused (nn/sgd.cpp's composite path) this is 3–6 elementwise launches, each reading and
// writing whole tensors; fused, each thread reads param, grad and buf once and writes
// param and buf once. Contiguous tensors only (parameters, their .grad and the buffer
// are), grid-stride loop, one element per step — consecutive threads touch consecutive
// elements, so every access coalesces.
// Rounding: the composite path's `a + alpha · b` (element::AddScaled) is one fused
// multiply-add on every backend, as PyTorch computes torch.add's alpha, and
// buf.mul_(momentum) is a plain product, so this kernel spells exactly those operations
// with the _rn intrinsics on the GPU and std::fma under the emulator: the CPU's bits.
// Bound: memory bandwidth — (3 reads + 2 writes) × itemsize × numel with momentum,
// (2 reads + 1 write) without.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include <ember/core/fused_plans.h>
#include <ember/cuda/kernels/device_support.cuh>

EMBER_KERNELS_BEGIN

using ::ember::SgdPlan;

// a + alpha · b rounded once, as the elementwise add (element::AddScaled) rounds it.
template <class T>
EMBER_DEVICE T add_scaled(T a, T alpha, T b) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<T, float>) return __fmaf_rn(alpha, b, a); else return __fma_rn(alpha, b, a);
#else
  return std::fma(alpha, b, a);
#endif
}

// a · b, rounded on its own (never contracted into a neighbouring add).
template <class T>
EMBER_DEVICE T product(T a, T b) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<T, float>) return __fmul_rn(a, b); else return __dmul_rn(a, b);
#else
  return static_cast<T>(a * b);
#endif
}

template <class T>
EMBER_GLOBAL void sgd_kernel(SgdPlan plan) {
  T* param = static_cast<T*>(plan.param);
  const T* grad = static_cast<const T*>(plan.grad);
  T* buffer = static_cast<T*>(plan.momentum_buffer);
  // Each hyper-parameter rounded to T once, as the composite ops' Scalar arguments are.
  const ::ember::optim::SGDOptions& options = plan.options;  // the --lr the command line wrote
  const T weight_decay = static_cast<T>(options.weight_decay), momentum = static_cast<T>(options.momentum);
  const T keep_fraction = static_cast<T>(1.0 - options.dampening), step = static_cast<T>(-options.lr);
  const bool decay = options.weight_decay != 0.0, use_momentum = options.momentum != 0.0;
  for (std::int64_t i = global_thread_index(); i < plan.numel; i += grid_thread_count()) {
    const T p = param[i];
    T d = options.maximize ? static_cast<T>(-grad[i]) : grad[i];
    if (decay) d = add_scaled(d, weight_decay, p);
    if (use_momentum) {
      const T b = plan.first_step ? d : add_scaled(product(buffer[i], momentum), keep_fraction, d);
      buffer[i] = b;
      d = options.nesterov ? add_scaled(d, momentum, b) : b;
    }
    param[i] = add_scaled(p, step, d);
  }
}

inline void dispatch_sgd(const SgdPlan& plan, cudaStream_t stream) {
  if (plan.numel == 0) return;
  EMBER_DISPATCH_FLOATING(plan.dtype, {
    auto kernel = &sgd_kernel<scalar_t>;
    EMBER_LAUNCH(kernel, dim3(blocks_for(plan.numel, 256)), dim3(256), stream, plan);
  });
}

EMBER_KERNELS_END
