// cuda/cuda_index.cu — the index kernels and the Philox generator on the GPU
// (cuda/kernels/index.cuh, cuda/kernels/philox.cuh).
// Each entry point runs on the plan's device (a DeviceGuard) and that device's stream, and
// registers itself in its kernel family's slot (core/dispatch.h).
#include <ember/core/backend.h>
#include <ember/cuda/cuda_context.h>
#include <ember/cuda/kernels/index.cuh>
#include <ember/cuda/kernels/philox.cuh>

namespace ember::cuda {

namespace {
using kernels::IndexKind;

template <IndexKind kind>
void index_on_gpu(const IndexPlan& plan) {
  DeviceGuard guard(plan.device);
  kernels::dispatch_index(kind, plan, current_stream());
}
void random_fill_on_gpu(const StridedPlan& plan, const PhiloxFill& fill) {
  DeviceGuard guard(plan.device);
  kernels::dispatch_philox(plan, fill, current_stream());
}
}  // namespace

EMBER_REGISTER_KERNEL(::ember::index_select_kernel, CUDA, index_on_gpu<IndexKind::Select>);
EMBER_REGISTER_KERNEL(::ember::index_add_kernel, CUDA, index_on_gpu<IndexKind::Add>);
EMBER_REGISTER_KERNEL(::ember::gather_kernel, CUDA, index_on_gpu<IndexKind::Gather>);
EMBER_REGISTER_KERNEL(::ember::scatter_add_kernel, CUDA, index_on_gpu<IndexKind::ScatterAdd>);
EMBER_REGISTER_KERNEL(::ember::random_fill_kernel, CUDA, random_fill_on_gpu);

}  // namespace ember::cuda
