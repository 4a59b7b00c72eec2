// cuda/cuda_binary.cu — the binary ops and comparisons on the GPU
// (cuda/kernels/elementwise_ops.cuh).
// Each entry point runs on the plan's device (a DeviceGuard: an op on cuda:1 tensors runs on
// cuda:1 whatever device is current, as PyTorch's device guards do) and that device's
// stream, and registers itself in its kernel family's slot (core/dispatch.h).
#include <ember/core/backend.h>
#include <ember/cuda/cuda_context.h>
#include <ember/cuda/kernels/elementwise_ops.cuh>

namespace ember::cuda {

namespace {
void binary_on_gpu(BinaryOp op, const StridedPlan& plan, Scalar alpha) {
  DeviceGuard guard(plan.device);
  kernels::dispatch_binary(op, plan, alpha, current_stream());
}
}  // namespace

EMBER_REGISTER_KERNEL(::ember::binary_kernel, CUDA, binary_on_gpu);

}  // namespace ember::cuda
