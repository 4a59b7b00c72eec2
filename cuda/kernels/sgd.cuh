// cuda/kernels/sgd.cuh — one fused SGD step (PyTorch's torch.optim.SGD update) per parameter.
//
// For each element, with d = grad + weight_decay · param:
//   momentum == 0:  param -= lr · d
//   otherwise:      buf = first_step ? d : momentum · buf + (1 - dampening) · d
//                   param -= lr · (nesterov ? d + momentum · buf : buf)
// Unfused this is 3-5 elementwise launches, each reading and writing whole tensors; fused,
// each thread reads param, grad and buf once and writes param and buf once. Contiguous
// tensors only (parameters and their .grad are), grid-stride loop, one element per step.
// Bound: memory bandwidth — (3 reads + 2 writes) × itemsize × numel with momentum,
// (2 reads + 1 write) without.
// Status: exercised by the emulator tests (tests/cuda/test_fused_kernels.cpp); not yet a
// Backend method, so nn::optim::SGD still updates with elementwise kernels (docs/cuda.md).
#pragma once

#include <cstdint>

#include <ember/cuda/kernels/device_support.cuh>

EMBER_KERNELS_BEGIN

struct SgdPlan {
  void* param = nullptr;
  const void* grad = nullptr;
  void* momentum_buffer = nullptr;  // may be nullptr when momentum == 0
  std::int64_t numel = 0;
  double lr = 0.0, momentum = 0.0, dampening = 0.0, weight_decay = 0.0;
  bool nesterov = false;
  bool first_step = false;  // the buffer does not exist yet: it starts as d
  DType dtype = DType::Float32;
};

template <class T>
EMBER_GLOBAL void sgd_kernel(SgdPlan plan) {
  T* param = static_cast<T*>(plan.param);
  const T* grad = static_cast<const T*>(plan.grad);
  T* buffer = static_cast<T*>(plan.momentum_buffer);
  const T lr = static_cast<T>(plan.lr), momentum = static_cast<T>(plan.momentum);
  const T dampening = static_cast<T>(plan.dampening), weight_decay = static_cast<T>(plan.weight_decay);
  for (std::int64_t i = global_thread_index(); i < plan.numel; i += grid_thread_count()) {
    const T p = param[i];
    T d = grad[i];
    if (weight_decay != T(0)) d += weight_decay * p;
    if (momentum != T(0)) {
      const T b = plan.first_step ? d : momentum * buffer[i] + (T(1) - dampening) * d;
      buffer[i] = b;
      d = plan.nesterov ? d + momentum * b : b;
    }
    param[i] = p - lr * d;
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
