// cuda/cuda_binary.cu — GPU instantiation of the binary ops (cuda/kernels/elementwise_ops.cuh).
#include <ember/cuda/cuda_ops.h>
#include <ember/cuda/kernels/elementwise_ops.cuh>

namespace ember::cuda::ops {

void binary(BinaryOp op, const StridedPlan& plan, Scalar alpha, cudaStream_t stream) {
  kernels::dispatch_binary(op, plan, alpha, stream);
}

}  // namespace ember::cuda::ops
