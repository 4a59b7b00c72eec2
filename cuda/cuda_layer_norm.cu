// cuda/cuda_layer_norm.cu — the layer-norm kernels on the GPU (cuda/kernels/layer_norm.cuh;
// plans: core/layer_norm_plan.h). Each entry point runs on the plan's device (a DeviceGuard)
// and that device's stream, and registers itself in its kernel family's slot (core/dispatch.h).
#include <ember/core/backend.h>
#include <ember/core/dispatch.h>
#include <ember/cuda/cuda_context.h>
#include <ember/cuda/kernels/layer_norm.cuh>

namespace ember::cuda {

namespace {
void layer_norm_on_gpu(const LayerNormPlan& plan) {
  DeviceGuard guard(plan.device);
  kernels::dispatch_layer_norm(plan, current_stream());
}
void layer_norm_backward_on_gpu(const LayerNormBackwardPlan& plan) {
  DeviceGuard guard(plan.device);
  kernels::dispatch_layer_norm_backward(plan, current_stream());
}
}  // namespace

EMBER_REGISTER_KERNEL(::ember::layer_norm_kernel, CUDA, layer_norm_on_gpu);
EMBER_REGISTER_KERNEL(::ember::layer_norm_backward_kernel, CUDA, layer_norm_backward_on_gpu);

}  // namespace ember::cuda
