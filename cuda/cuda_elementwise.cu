// cuda/cuda_elementwise.cu — fill, copy (every dtype pair) and where on the GPU.
// The kernels and their dtype dispatch live in cuda/kernels/elementwise*.cuh.
// Each entry point runs on the plan's device (a DeviceGuard: an op on cuda:1 tensors runs on
// cuda:1 whatever device is current, as PyTorch's device guards do) and that device's
// stream, and registers itself in its kernel family's slot (core/dispatch.h).
#include <ember/core/backend.h>
#include <ember/cuda/cuda_context.h>
#include <ember/cuda/kernels/elementwise_ops.cuh>

namespace ember::cuda {

namespace {
void fill_on_gpu(const StridedPlan& plan, Scalar value) {
  DeviceGuard guard(plan.device);
  kernels::dispatch_fill(plan, value, current_stream());
}
void copy_on_gpu(const StridedPlan& plan) {
  DeviceGuard guard(plan.device);
  kernels::dispatch_copy(plan, current_stream());
}
void where_on_gpu(const StridedPlan& plan) {
  DeviceGuard guard(plan.device);
  kernels::dispatch_where(plan, current_stream());
}
}  // namespace

EMBER_REGISTER_KERNEL(::ember::fill_kernel, CUDA, fill_on_gpu);
EMBER_REGISTER_KERNEL(::ember::copy_kernel, CUDA, copy_on_gpu);
EMBER_REGISTER_KERNEL(::ember::where_kernel, CUDA, where_on_gpu);

}  // namespace ember::cuda
