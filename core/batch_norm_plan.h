// core/batch_norm_plan.h — the plain-data plans of the batch-norm kernels (core/backend.h).
//
// Batch norm (issue 19; PyTorch's native_batch_norm and native_batch_norm_backward)
// normalises every channel c of an input laid out as [batch, channels, inner] (inner = H·W
// for BatchNorm2d, L for BatchNorm1d on [N, C, L], 1 on [N, C]) over its batch·inner values:
//   training: mean_c, var_c = the batch mean and the biased batch variance of channel c
//   eval:     mean_c, var_c = running_mean[c], running_var[c]
//   y = (x - mean_c) · invstd_c · weight[c] + bias[c],   invstd_c = 1 / sqrt(var_c + eps)
// The native layer (core/batch_norm.cpp) lays the input out contiguously and checks every
// argument; kernels (core/cpu/batch_norm_kernels.cpp, core/reference/batch_norm_loops.cpp)
// only compute. Like core/fused_plans.h: POD, raw pointers, no ownership, one dtype for all.
#pragma once

#include <cstdint>

#include <ember/core/dtype.h>

namespace ember {

struct BatchNormPlan {
  const void* input = nullptr;    // [batch, channels, inner], contiguous
  void* output = nullptr;         // [batch, channels, inner], contiguous
  const void* weight = nullptr;   // [channels], or nullptr (all ones)
  const void* bias = nullptr;     // [channels], or nullptr (all zeros)
  // [channels], contiguous, or nullptr. training: updated in place,
  //   running = (1 - momentum) · running + momentum · batch statistic
  // with the unbiased variance (sum of squares / (count - 1)), as PyTorch; eval: read.
  void* running_mean = nullptr;
  void* running_var = nullptr;
  // [channels], written: the mean and invstd that normalised each channel (the batch's in
  // training, the running statistics' in eval). The backward reads them.
  void* save_mean = nullptr;
  void* save_invstd = nullptr;
  std::int64_t batch = 0, channels = 0, inner = 0;
  bool training = true;
  double momentum = 0.1, eps = 1e-5;
  DType dtype = DType::Float32;
  int device = -1;  // as StridedPlan::device
};

// The backward of BatchNormPlan, PyTorch's closed form (x̂ = (x - mean) · invstd, count =
// batch · inner, every sum over the channel's count values):
//   grad_bias[c]   = Σ dy
//   grad_weight[c] = Σ dy · x̂
//   training: dx = weight · invstd · (dy - Σdy / count - x̂ · Σ(dy · x̂) / count)
//   eval:     dx = weight · invstd · dy      (the statistics are constants)
// Any of the three outputs may be nullptr (not needed).
struct BatchNormBackwardPlan {
  const void* grad_output = nullptr;  // [batch, channels, inner], contiguous
  const void* input = nullptr;        // [batch, channels, inner], contiguous
  const void* weight = nullptr;       // [channels], or nullptr (all ones)
  const void* save_mean = nullptr;    // [channels], from the forward
  const void* save_invstd = nullptr;  // [channels], from the forward
  void* grad_input = nullptr;         // [batch, channels, inner], or nullptr
  void* grad_weight = nullptr;        // [channels], or nullptr
  void* grad_bias = nullptr;          // [channels], or nullptr
  std::int64_t batch = 0, channels = 0, inner = 0;
  bool training = true;
  DType dtype = DType::Float32;
  int device = -1;
};

}  // namespace ember
