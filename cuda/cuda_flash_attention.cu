// cuda/cuda_flash_attention.cu — the fused attention kernels on the GPU
// (cuda/kernels/flash_attention.cuh; plans: core/flash_attention_plan.h). Each entry point runs
// on the plan's device (a DeviceGuard) and that device's stream, and registers itself in its
// kernel family's slot (core/dispatch.h).
#include <ember/core/backend.h>
#include <ember/core/dispatch.h>
#include <ember/cuda/cuda_context.h>
#include <ember/cuda/kernels/flash_attention.cuh>

namespace ember::cuda {

namespace {
void flash_attention_on_gpu(const FlashAttentionPlan& plan) {
  DeviceGuard guard(plan.device);
  kernels::dispatch_flash_attention(plan, current_stream());
}
void flash_attention_backward_on_gpu(const FlashAttentionBackwardPlan& plan) {
  DeviceGuard guard(plan.device);
  kernels::dispatch_flash_attention_backward(plan, current_stream());
}
}  // namespace

EMBER_REGISTER_KERNEL(::ember::flash_attention_kernel, CUDA, flash_attention_on_gpu);
EMBER_REGISTER_KERNEL(::ember::flash_attention_backward_kernel, CUDA, flash_attention_backward_on_gpu);

}  // namespace ember::cuda
