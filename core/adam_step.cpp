// core/adam_step.cpp — native::adam_step_ (see adam_step.h): checks what the fused update
// can take, builds its AdamPlan and hands it to adam_step_kernel, which is the fast pass
// (core/cpu/adam_step.cpp) or, under EMBER_KERNELS=reference, the plain loop
// (core/reference/training_loops.cpp). Both run core/adam_update.h's update.
#include <ember/core/adam_step.h>

#include <ember/core/backend.h>

namespace ember::native {

namespace {

bool usable(const Tensor& t, const Tensor& param) {
  return t.defined() && t.is_cpu() && t.dtype() == param.dtype() && t.is_contiguous() &&
         IntArrayRef(t.sizes()) == IntArrayRef(param.sizes());
}

}  // namespace

bool adam_step_(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                const Tensor& max_exp_avg_sq, const AdamStepOptions& options) {
  if (param.dtype() != DType::Float32 && param.dtype() != DType::Float64) return false;
  for (const Tensor* t : {&param, &grad, &exp_avg, &exp_avg_sq})
    if (!usable(*t, param)) return false;
  if (options.amsgrad && !usable(max_exp_avg_sq, param)) return false;
  const AdamPlan plan{.param = param.data_ptr(),
                      .grad = grad.data_ptr(),
                      .exp_avg = exp_avg.data_ptr(),
                      .exp_avg_sq = exp_avg_sq.data_ptr(),
                      .max_exp_avg_sq = options.amsgrad ? max_exp_avg_sq.data_ptr() : nullptr,
                      .numel = param.numel(),
                      .lr = options.lr,
                      .beta1 = options.beta1,
                      .beta2 = options.beta2,
                      .eps = options.eps,
                      .weight_decay = options.weight_decay,
                      .amsgrad = options.amsgrad,
                      .maximize = options.maximize,
                      .decoupled_weight_decay = options.decoupled_weight_decay,
                      .step = options.step,
                      .dtype = param.dtype()};
  adam_step_kernel(param.device(), plan);
  // In place, like the composite mul_/add_: a graph that saved the old values notices.
  for (const Tensor* t : {&param, &exp_avg, &exp_avg_sq}) t->bump_version();
  if (options.amsgrad) max_exp_avg_sq.bump_version();
  return true;
}

}  // namespace ember::native
