// core/layer_norm.h — the native (kernel-level, no autograd) layer-norm ops.
//
// Issue 21; PyTorch's native_layer_norm / native_layer_norm_backward. The differentiable op
// is ember::layer_norm (autograd/layer_norm_ops.cpp), the user-facing ones F::layer_norm and
// nn::LayerNorm (nn/layer_norm.h). What is computed, and how it is rounded:
// core/layer_norm_plan.h and core/cpu/layer_norm_kernels.cpp.
#pragma once

#include <array>

#include <ember/core/tensor.h>

namespace ember::native {

struct LayerNormResult {
  Tensor output;  // input's shape, contiguous
  Tensor mean;    // input's leading dims, then a 1 per normalised dim ([2, 3, 1] for [2, 3, 4] over [4])
  Tensor rstd;    // the same shape: 1 / sqrt(var + eps), the variance biased
};

// input: [*, normalized_shape...], floating; weight, bias: normalized_shape, of input's dtype
// and device, or undefined; a bfloat16/float16 input also takes float32 parameters, and then
// mean and rstd are float32 (core/norm_parameters.h). Normalises over the last normalized_shape.size() dims. Errors with
// PyTorch's wording ("Given normalized_shape=[4], expected input with shape [*, 4], but got
// input of size[2, 3]", ...), checked in PyTorch's order.
LayerNormResult layer_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight, const Tensor& bias,
                           double eps);

struct LayerNormGradients {
  Tensor grad_input, grad_weight, grad_bias;  // undefined where output_mask says not needed
};

// The gradients of layer_norm's output w.r.t. input, weight and bias (grad_weight and
// grad_bias shaped normalized_shape), from the forward's mean and rstd. bias is not read
// (PyTorch's signature has it); output_mask: which of the three to compute.
LayerNormGradients layer_norm_backward(const Tensor& grad_output, const Tensor& input, IntArrayRef normalized_shape,
                                       const Tensor& mean, const Tensor& rstd, const Tensor& weight, const Tensor& bias,
                                       std::array<bool, 3> output_mask);

}  // namespace ember::native
