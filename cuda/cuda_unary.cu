// cuda/cuda_unary.cu — the unary ops on the GPU (cuda/kernels/elementwise_ops.cuh), in a
// file of their own so nvcc compiles the binary ops' instantiations in parallel.
// Each entry point runs on the plan's device (a DeviceGuard: an op on cuda:1 tensors runs on
// cuda:1 whatever device is current, as PyTorch's device guards do) and that device's
// stream, and registers itself in its kernel family's slot (core/dispatch.h).
#include <ember/core/backend.h>
#include <ember/cuda/cuda_context.h>
#include <ember/cuda/kernels/elementwise_ops.cuh>

namespace ember::cuda {

namespace {
void unary_on_gpu(UnaryOp op, const StridedPlan& plan, const UnaryParams& params) {
  DeviceGuard guard(plan.device);
  kernels::dispatch_unary(op, plan, params, current_stream());
}
}  // namespace

EMBER_REGISTER_KERNEL(::ember::unary_kernel, CUDA, unary_on_gpu);

}  // namespace ember::cuda
