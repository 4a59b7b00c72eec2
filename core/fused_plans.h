// core/fused_plans.h — the plain-data plans of the fused training ops (core/backend.h).
//
// Issue 8 ("fused where the training step benefits"): a training step spends most of its
// non-GEMM time in chains of small elementwise passes. Three of those chains get one
// backend call each, described by the plans below; the native functions that build them
// live in core/fused.cpp, the CPU loops in core/cpu/fused_kernels.cpp, the CUDA kernels in
// cuda/kernels/{cross_entropy,sgd,one_hot}.cuh (which read these very structs).
// docs/performance.md ("Fused ops") says what each one saves.
// Like core/strided_index.h: POD, raw pointers, no ownership; the native layer keeps the
// tensors alive for the duration of the call and has already checked every value.
#pragma once

#include <cstdint>

#include <ember/core/dtype.h>
#include <ember/core/sgd_options.h>

namespace ember {

// Cross-entropy over the rows of contiguous [rows, classes] logits, fused forward +
// backward (log_softmax + nll_loss and their gradients in one pass per row):
//   losses[r]          = logsumexp(x[r, :]) - x[r, t_r]                 (0 when t_r == ignore_index)
//   grad_logits[r, c]  = (softmax(x[r, :])[c] - [c == t_r]) * scale      (0 when t_r == ignore_index)
// grad_logits may be null (forward only). Every target is a class in [0, classes) or
// ignore_index (checked by native::cross_entropy_rows).
struct CrossEntropyPlan {
  const void* logits = nullptr;            // [rows, classes], contiguous, dtype
  const std::int64_t* targets = nullptr;   // [rows]
  void* losses = nullptr;                  // [rows], dtype
  void* grad_logits = nullptr;             // [rows, classes], dtype, or nullptr
  std::int64_t rows = 0, classes = 0;
  std::int64_t ignore_index = -100;
  double scale = 1.0;                      // multiplies every gradient entry (1 / kept rows for 'mean')
  DType dtype = DType::Float32;
  int device = -1;                         // as StridedPlan::device
};

// One torch.optim.SGD step for one contiguous parameter, in place, element by element:
//   d = maximize ? -grad : grad
//   d = d + weight_decay * param                                   (when weight_decay != 0)
//   buf = first_step ? d : momentum * buf + (1 - dampening) * d    (when momentum != 0)
//   d = nesterov ? d + momentum * buf : buf                         (when momentum != 0)
//   param = param - lr * d
// Each scalar is rounded to the parameter's dtype first and every product and sum is
// rounded as the composite ops round it, so the result is bit-identical to those ops
// (nn/sgd.cpp's fallback) on the CPU.
// The hyper-parameters are the optimizer's own SGDOptions, embedded whole (a kernel takes
// the plan by value, so it cannot point at host memory): options.lr is the --lr the
// command line wrote (core/sgd_options.h).
struct SgdPlan {
  void* param = nullptr;
  const void* grad = nullptr;
  void* momentum_buffer = nullptr;  // [numel] when options.momentum != 0, else nullptr
  std::int64_t numel = 0;
  optim::SGDOptions options;
  bool first_step = false;  // the buffer is being created: it starts as d (no dampening)
  DType dtype = DType::Float32;
  int device = -1;          // as StridedPlan::device
};

// One torch.optim.Adam / AdamW step for one contiguous parameter, in place, element by
// element, rounded as PyTorch 2.x's CPU Adam rounds it (core/adam_step.h):
//   g = maximize ? -grad : grad
//   param = param * (1 - lr * weight_decay)            (AdamW, when weight_decay != 0)
//   g = g + weight_decay * param                        (Adam, when weight_decay != 0; fused)
//   exp_avg = lerp(exp_avg, g, 1 - beta1)               (fused, PyTorch's two-sided lerp)
//   exp_avg_sq = (1 - beta2) * g * g + exp_avg_sq * beta2          (the last step fused)
//   max_exp_avg_sq = max(max_exp_avg_sq, exp_avg_sq)    (amsgrad; NaN wins)
//   param = (-lr / (1 - beta1^step)) * exp_avg / (sqrt(v) / sqrt(1 - beta2^step) + eps) + param
// where v is exp_avg_sq, or max_exp_avg_sq with amsgrad. step is the count after this step's
// increment. CPU only (the GPU runs nn/adam.cpp's composite of tensor ops).
struct AdamPlan {
  void* param = nullptr;
  const void* grad = nullptr;
  void* exp_avg = nullptr;
  void* exp_avg_sq = nullptr;
  void* max_exp_avg_sq = nullptr;  // [numel] with amsgrad, else nullptr
  std::int64_t numel = 0;
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0.0;
  bool amsgrad = false, maximize = false, decoupled_weight_decay = false;
  double step = 1.0;
  DType dtype = DType::Float32;
};

// The p-norm of each of `count` contiguous tensors of one dtype on one device, in one
// backend call (PyTorch's torch._foreach_norm; issue 20: clip_grad_norm_'s norms):
//   output[i] = (Σ_j |x_i[j]|^p)^(1/p)      (p = 1: Σ |x|, p = 2: sqrt(Σ x²))
//   output[i] = max_j |x_i[j]|              (p = inf; NaN if any element is NaN)
// and 0 for an empty tensor. The sums run in double on the CPU and in the dtype's CUDA
// accumulate type on the GPU (float for float32), so float32 norms may differ from PyTorch's
// in the last bits. A call takes at most kMaxTensors tensors (the plan is a kernel argument,
// passed by value); native::foreach_norm splits longer lists.
struct ForeachNormPlan {
  static constexpr int kMaxTensors = 48;
  int count = 0;
  const void* data[kMaxTensors] = {};
  std::int64_t numel[kMaxTensors] = {};
  void* output = nullptr;  // [count], dtype
  double p = 2.0;          // > 0; +inf for the max norm
  DType dtype = DType::Float32;
  int device = -1;  // as StridedPlan::device
};

// one_hot: out[r, c] = (index[r] == c) as int64, for contiguous index [rows] and out
// [rows, classes]; every index value is in [0, classes) (checked by native::one_hot).
struct OneHotPlan {
  const std::int64_t* index = nullptr;
  std::int64_t* out = nullptr;
  std::int64_t rows = 0, classes = 0;
  int device = -1;  // as StridedPlan::device
};

}  // namespace ember
