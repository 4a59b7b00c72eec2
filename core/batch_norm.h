// core/batch_norm.h — the native (kernel-level, no autograd) batch-norm ops.
//
// Issue 19; PyTorch's native_batch_norm / native_batch_norm_backward. The differentiable
// op is ember::batch_norm (autograd/batch_norm_ops.cpp), the user-facing ones are
// F::batch_norm, nn::BatchNorm1d and nn::BatchNorm2d (nn/batch_norm.h). What is computed,
// and how it is rounded: core/batch_norm_plan.h and core/cpu/batch_norm_kernels.cpp.
#pragma once

#include <array>

#include <ember/core/tensor.h>

namespace ember::native {

struct BatchNormResult {
  Tensor output;       // input's shape, contiguous
  Tensor save_mean;    // [channels]: the mean that normalised each channel (batch or running)
  Tensor save_invstd;  // [channels]: 1 / sqrt(var + eps), with the same var
};

// input: [batch, channels, ...] (at least 2-D), floating; weight, bias, running_mean,
// running_var: [channels] of input's dtype and device, or undefined (a bfloat16/float16 input
// also takes float32 ones, and then saves float32 statistics: core/norm_parameters.h). training: normalise with
// the batch statistics and, when running_mean / running_var are defined, update them in place
// (running = (1 - momentum) · running + momentum · batch statistic; the variance unbiased).
// Eval (training = false) normalises with the running statistics, which must be defined.
// Errors with PyTorch's wording ("running_mean should contain 3 elements not 4", ...).
BatchNormResult batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                           const Tensor& running_var, bool training, double momentum, double eps);

struct BatchNormGradients {
  Tensor grad_input, grad_weight, grad_bias;  // undefined where output_mask says not needed
};

// The gradients of batch_norm's output w.r.t. input, weight and bias, from the forward's
// save_mean and save_invstd. output_mask: which of the three to compute.
BatchNormGradients batch_norm_backward(const Tensor& grad_output, const Tensor& input, const Tensor& weight,
                                       const Tensor& save_mean, const Tensor& save_invstd, bool training,
                                       std::array<bool, 3> output_mask);

}  // namespace ember::native
