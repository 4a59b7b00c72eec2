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

std::uint64_t philox_fill(void* out, DType dtype, std::int64_t numel, std::uint64_t seed, std::uint64_t offset,
                          bool normal, double a, double b, cudaStream_t stream) {
  return kernels::dispatch_philox(out, dtype, numel, seed, offset,
                                  normal ? kernels::RandomKind::Normal : kernels::RandomKind::Uniform, a, b, stream);
}

}  // namespace ember::cuda::ops
