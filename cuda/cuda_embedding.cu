// cuda/cuda_embedding.cu — the embedding backward on the GPU (cuda/kernels/embedding.cuh;
// plan: core/embedding_plan.h). The entry point runs on the plan's device (a DeviceGuard)
// and that device's stream, takes the sort's scratch from the caching allocator, and
// registers itself in its kernel family's slot (core/dispatch.h).
#include <ember/core/backend.h>
#include <ember/core/dispatch.h>
#include <ember/cuda/cuda_context.h>
#include <ember/cuda/device_scratch.h>
#include <ember/cuda/kernels/embedding.cuh>

namespace ember::cuda {

namespace {
void embedding_backward_on_gpu(const EmbeddingBackwardPlan& plan) {
  DeviceGuard guard(plan.device);
  DeviceScratch scratch;
  kernels::dispatch_embedding_backward(plan, current_stream(), &scratch);
}
}  // namespace

EMBER_REGISTER_KERNEL(::ember::embedding_backward_kernel, CUDA, embedding_backward_on_gpu);

}  // namespace ember::cuda
