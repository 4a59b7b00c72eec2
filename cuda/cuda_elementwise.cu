// cuda/cuda_elementwise.cu — GPU instantiation of fill, copy (every dtype pair) and where.
// The kernels and their dispatch live in cuda/kernels/elementwise*.cuh.
#include <ember/cuda/cuda_ops.h>
#include <ember/cuda/kernels/elementwise_ops.cuh>

namespace ember::cuda::ops {

void fill(const StridedPlan& plan, Scalar value, cudaStream_t stream) { kernels::dispatch_fill(plan, value, stream); }
void copy(const StridedPlan& plan, cudaStream_t stream) { kernels::dispatch_copy(plan, stream); }
void where(const StridedPlan& plan, cudaStream_t stream) { kernels::dispatch_where(plan, stream); }

}  // namespace ember::cuda::ops
