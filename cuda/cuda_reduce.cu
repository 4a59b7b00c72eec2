// cuda/cuda_reduce.cu — GPU instantiation of reductions and softmax (cuda/kernels/reduce.cuh,
// cuda/kernels/softmax.cuh). Split reductions take their scratch from the caching allocator.
#include <ember/core/allocator.h>
#include <ember/cuda/cuda_ops.h>
#include <ember/cuda/kernels/reduce.cuh>
#include <ember/cuda/kernels/softmax.cuh>

namespace ember::cuda::ops {

namespace {
class DeviceScratch final : public kernels::ScratchAllocator {
 public:
  void* allocate(std::size_t bytes) override { return allocator_for(DeviceType::CUDA).allocate(bytes, kCUDA); }
  void release(void* pointer, std::size_t bytes) override {
    allocator_for(DeviceType::CUDA).deallocate(pointer, bytes, kCUDA);
  }
};
}  // namespace

void reduce(ReduceOp op, const ReducePlan& plan, cudaStream_t stream) {
  DeviceScratch scratch;
  kernels::dispatch_reduce(op, plan, stream, &scratch);
}
void softmax(const SoftmaxPlan& plan, bool log, cudaStream_t stream) { kernels::dispatch_softmax(plan, log, stream); }

}  // namespace ember::cuda::ops
