// cuda/cuda_batch_norm.cu — the batch-norm kernels on the GPU (cuda/kernels/batch_norm.cuh;
// plans: core/batch_norm_plan.h). Each entry point runs on the plan's device (a
// DeviceGuard) and that device's stream, and registers itself in its kernel family's slot
// (core/dispatch.h).
#include <ember/core/backend.h>
#include <ember/core/dispatch.h>
#include <ember/cuda/cuda_context.h>
#include <ember/cuda/kernels/batch_norm.cuh>

namespace ember::cuda {

namespace {
void batch_norm_on_gpu(const BatchNormPlan& plan) {
  DeviceGuard guard(plan.device);
  kernels::dispatch_batch_norm(plan, current_stream());
}
void batch_norm_backward_on_gpu(const BatchNormBackwardPlan& plan) {
  DeviceGuard guard(plan.device);
  kernels::dispatch_batch_norm_backward(plan, current_stream());
}
}  // namespace

EMBER_REGISTER_KERNEL(::ember::batch_norm_kernel, CUDA, batch_norm_on_gpu);
EMBER_REGISTER_KERNEL(::ember::batch_norm_backward_kernel, CUDA, batch_norm_backward_on_gpu);

}  // namespace ember::cuda
