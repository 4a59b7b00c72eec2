// cuda/cuda_conv.cu — GPU instantiation of the convolution and pooling kernels
// (cuda/kernels/conv.cuh: im2col / col2im + the CUDA GEMM; cuda/kernels/pool.cuh).
// Each entry point runs on the plan's device (a DeviceGuard) and that device's stream, takes
// its im2col scratch from the caching allocator, and registers itself in its kernel family's
// slot (core/dispatch.h).
#include <ember/core/allocator.h>
#include <ember/core/backend.h>
#include <ember/core/dispatch.h>
#include <ember/cuda/cuda_context.h>
#include <ember/cuda/device_scratch.h>
#include <ember/cuda/kernels/conv.cuh>
#include <ember/cuda/kernels/pool.cuh>

namespace ember::cuda {

namespace {
void conv2d_on_gpu(const Conv2dPlan& plan) {
  DeviceGuard guard(plan.device);
  DeviceScratch scratch;
  kernels::dispatch_conv2d(plan, current_stream(), &scratch);
}
void conv2d_backward_input_on_gpu(const Conv2dPlan& plan) {
  DeviceGuard guard(plan.device);
  DeviceScratch scratch;
  kernels::dispatch_conv2d_backward_input(plan, current_stream(), &scratch);
}
void conv2d_backward_weight_on_gpu(const Conv2dPlan& plan) {
  DeviceGuard guard(plan.device);
  DeviceScratch scratch;
  kernels::dispatch_conv2d_backward_weight(plan, current_stream(), &scratch);
}
void pool2d_on_gpu(const Pool2dPlan& plan) {
  DeviceGuard guard(plan.device);
  kernels::dispatch_pool2d(plan, current_stream());
}
void pool2d_backward_on_gpu(const Pool2dPlan& plan) {
  DeviceGuard guard(plan.device);
  kernels::dispatch_pool2d_backward(plan, current_stream());
}
}  // namespace

EMBER_REGISTER_KERNEL(::ember::conv2d_kernel, CUDA, conv2d_on_gpu);
EMBER_REGISTER_KERNEL(::ember::conv2d_backward_input_kernel, CUDA, conv2d_backward_input_on_gpu);
EMBER_REGISTER_KERNEL(::ember::conv2d_backward_weight_kernel, CUDA, conv2d_backward_weight_on_gpu);
EMBER_REGISTER_KERNEL(::ember::pool2d_kernel, CUDA, pool2d_on_gpu);
EMBER_REGISTER_KERNEL(::ember::pool2d_backward_kernel, CUDA, pool2d_backward_on_gpu);

}  // namespace ember::cuda
