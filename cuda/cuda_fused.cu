// cuda/cuda_fused.cu — GPU instantiation of the fused training kernels: cross-entropy
// forward + backward, the SGD step and one_hot (cuda/kernels/cross_entropy.cuh, sgd.cuh,
// one_hot.cuh). ReLU's backward is an elementwise functor and lives with the binary ops
// (cuda_binary.cu). Plans: core/fused_plans.h.
#include <ember/cuda/cuda_ops.h>
#include <ember/cuda/kernels/cross_entropy.cuh>
#include <ember/cuda/kernels/one_hot.cuh>
#include <ember/cuda/kernels/sgd.cuh>

namespace ember::cuda::ops {

void cross_entropy(const CrossEntropyPlan& plan, cudaStream_t stream) { kernels::dispatch_cross_entropy(plan, stream); }
void sgd_step(const SgdPlan& plan, cudaStream_t stream) { kernels::dispatch_sgd(plan, stream); }
void one_hot(const OneHotPlan& plan, cudaStream_t stream) { kernels::dispatch_one_hot(plan, stream); }

}  // namespace ember::cuda::ops
