// nn/clip_grad.h — nn::utils::clip_grad_norm_ and clip_grad_value_ (PyTorch:
// torch.nn.utils.clip_grad_norm_ / clip_grad_value_).
//
// clip_grad_norm_ scales every gradient by min(1, max_norm / (total_norm + 1e-6)), where
// total_norm is the norm_type-norm of all gradients together (the norm of the vector of
// per-parameter norms), and returns total_norm — the norm before clipping — as a 0-d
// tensor. As in PyTorch it is computed on the device: one reduction per gradient, one over
// their norms, the coefficient and the scaling are tensor ops, and nothing is copied to the
// host (no synchronisation per parameter, or at all unless error_if_nonfinite). The
// coefficient is applied even when it clamps to 1 (a multiply by 1), as PyTorch does; the
// norms agree with PyTorch's to rounding (its reductions sum in another order), checked in
// float32 and float64 by tests/nn/test_clip_grad.cpp.
// Parameters without a gradient are skipped; with none at all the norm is 0.
// A nan or inf total norm: error_if_nonfinite throws PyTorch's RuntimeError text as a
// ValueError; otherwise the gradients are scaled anyway (nan everywhere for a nan norm,
// zeros — and nan where a gradient is inf — for an inf one), as PyTorch does.
//
// clip_grad_value_ clamps every gradient element into [-clip_value, clip_value] in place.
//
// Usage:  loss.backward();
//         Tensor norm = ember::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
//         optimizer.step();
#pragma once

#include <vector>

#include <ember/core/tensor.h>

namespace ember::nn::utils {

// PyTorch 2.6's get_total_norm: the norm_type-norm of all the tensors together (0-d, on
// the first one's device), without changing anything. Empty list: 0.
Tensor get_total_norm(const std::vector<Tensor>& tensors, double norm_type = 2.0, bool error_if_nonfinite = false);
// The gradients of `parameters`, those that have one (PyTorch: [p.grad for p in params if p.grad is not None]).
std::vector<Tensor> gradients_of(const std::vector<Tensor>& parameters);
// norm_type: any p > 0, or infinity (the largest absolute value).
Tensor clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);
void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value);

}  // namespace ember::nn::utils
