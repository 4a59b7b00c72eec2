// cuda/cuda_unary.cu — GPU instantiation of the unary ops (cuda/kernels/elementwise_ops.cuh).
#include <ember/cuda/cuda_ops.h>
#include <ember/cuda/kernels/elementwise_ops.cuh>

namespace ember::cuda::ops {

void unary(UnaryOp op, const StridedPlan& plan, const UnaryParams& params, cudaStream_t stream) {
  kernels::dispatch_unary(op, plan, params, stream);
}

}  // namespace ember::cuda::ops
