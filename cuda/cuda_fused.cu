// cuda/cuda_fused.cu — the fused training kernels on the GPU: cross-entropy forward +
// backward, the SGD step, one_hot and foreach_norm (cuda/kernels/cross_entropy.cuh, sgd.cuh,
// one_hot.cuh, foreach_norm.cuh).
// ReLU's backward is an elementwise functor and lives with the binary ops (cuda_binary.cu).
// Plans: core/fused_plans.h.
// Each entry point runs on the plan's device (a DeviceGuard) and that device's stream, and
// registers itself in its kernel family's slot (core/dispatch.h).
#include <ember/core/backend.h>
#include <ember/cuda/cuda_context.h>
#include <ember/cuda/device_scratch.h>
#include <ember/cuda/kernels/cross_entropy.cuh>
#include <ember/cuda/kernels/foreach_norm.cuh>
#include <ember/cuda/kernels/one_hot.cuh>
#include <ember/cuda/kernels/sgd.cuh>

namespace ember::cuda {

namespace {
void cross_entropy_on_gpu(const CrossEntropyPlan& plan) {
  DeviceGuard guard(plan.device);
  kernels::dispatch_cross_entropy(plan, current_stream());
}
void sgd_step_on_gpu(const SgdPlan& plan) {
  DeviceGuard guard(plan.device);
  kernels::dispatch_sgd(plan, current_stream());
}
void one_hot_on_gpu(const OneHotPlan& plan) {
  DeviceGuard guard(plan.device);
  kernels::dispatch_one_hot(plan, current_stream());
}
void foreach_norm_on_gpu(const ForeachNormPlan& plan) {
  DeviceGuard guard(plan.device);
  DeviceScratch scratch;
  kernels::dispatch_foreach_norm(plan, current_stream(), &scratch);
}
}  // namespace

EMBER_REGISTER_KERNEL(::ember::cross_entropy_kernel, CUDA, cross_entropy_on_gpu);
EMBER_REGISTER_KERNEL(::ember::sgd_step_kernel, CUDA, sgd_step_on_gpu);
EMBER_REGISTER_KERNEL(::ember::one_hot_kernel, CUDA, one_hot_on_gpu);
EMBER_REGISTER_KERNEL(::ember::foreach_norm_kernel, CUDA, foreach_norm_on_gpu);

}  // namespace ember::cuda
