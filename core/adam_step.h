// core/adam_step.h — one Adam/AdamW update of a parameter on the CPU, rounded exactly as
// PyTorch 2.x's CPU Adam rounds it (its single-tensor loop: lerp_, mul_, addcmul_, sqrt, div,
// add_, addcdiv_; only its vectorised sqrt, not always correctly rounded, is not copied; the
// update of one element is core/adam_update.h). It runs through adam_step_kernel: the fast
// pass (core/cpu/adam_step.cpp), or the reference loop under EMBER_KERNELS=reference
// (core/reference/training_loops.cpp), bit for bit the same.
// nn/adam.cpp calls it for contiguous float32/float64 CPU parameters and keeps its composite
// of tensor ops for everything else (16-bit, the GPU), which computes the same update with
// plain products and sums where PyTorch fuses some of them.
#pragma once

#include <ember/core/tensor.h>

namespace ember::native {

struct AdamStepOptions {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0.0;
  bool amsgrad = false, maximize = false, decoupled_weight_decay = false;
  double step = 1.0;  // the step count after this step's increment
};

// Updates param, exp_avg, exp_avg_sq (and max_exp_avg_sq with amsgrad) in place and returns
// true; returns false, touching nothing, unless every tensor is a contiguous CPU tensor of
// param's dtype and shape and that dtype is float32 or float64.
bool adam_step_(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                const Tensor& max_exp_avg_sq, const AdamStepOptions& options);

}  // namespace ember::native
