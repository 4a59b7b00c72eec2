// cuda/cuda_reduce.cu — GPU instantiation of reductions and softmax (cuda/kernels/reduce.cuh,
// cuda/kernels/softmax.cuh). Split reductions take their scratch from the caching allocator.
// Each entry point runs on the plan's device (a DeviceGuard) and that device's stream, and
// registers itself in its kernel family's slot (core/dispatch.h).
#include <ember/core/allocator.h>
#include <ember/core/backend.h>
#include <ember/cuda/cuda_context.h>
#include <ember/cuda/device_scratch.h>
#include <ember/cuda/kernels/reduce.cuh>
#include <ember/cuda/kernels/softmax.cuh>

namespace ember::cuda {

namespace {
void reduce_on_gpu(ReduceOp op, const ReducePlan& plan) {
  DeviceGuard guard(plan.device);
  DeviceScratch scratch;
  kernels::dispatch_reduce(op, plan, current_stream(), &scratch);
}
void softmax_on_gpu(const SoftmaxPlan& plan, bool log) {
  DeviceGuard guard(plan.device);
  kernels::dispatch_softmax(plan, log, current_stream());
}
}  // namespace

EMBER_REGISTER_KERNEL(::ember::reduce_kernel, CUDA, reduce_on_gpu);
EMBER_REGISTER_KERNEL(::ember::softmax_kernel, CUDA, softmax_on_gpu);

}  // namespace ember::cuda
