// cuda/cuda_index.cu — GPU instantiation of the index kernels and the Philox generator
// (cuda/kernels/index.cuh, cuda/kernels/philox.cuh).
#include <ember/cuda/cuda_ops.h>
#include <ember/cuda/kernels/index.cuh>
#include <ember/cuda/kernels/philox.cuh>

namespace ember::cuda::ops {

using kernels::IndexKind;

void index_select(const IndexPlan& plan, cudaStream_t stream) { kernels::dispatch_index(IndexKind::Select, plan, stream); }
void index_add(const IndexPlan& plan, cudaStream_t stream) { kernels::dispatch_index(IndexKind::Add, plan, stream); }
void gather(const IndexPlan& plan, cudaStream_t stream) { kernels::dispatch_index(IndexKind::Gather, plan, stream); }
void scatter_add(const IndexPlan& plan, cudaStream_t stream) {
  kernels::dispatch_index(IndexKind::ScatterAdd, plan, stream);
}

void random_fill(const StridedPlan& plan, const PhiloxFill& fill, cudaStream_t stream) {
  kernels::dispatch_philox(plan, fill, stream);
}

}  // namespace ember::cuda::ops
