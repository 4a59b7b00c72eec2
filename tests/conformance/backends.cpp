// tests/conformance/backends.cpp — see backends.h.
//
//   cpu               core's CPU kernels, as every ember program runs them;
//   cuda (emulated)   the CUDA kernels of cuda/kernels/*.cuh on the CPU emulator
//                     (cuda/emulate/), on the same host tensors: for the duration of the
//                     call, the CPU entry of every kernel family's dispatch slot
//                     (core/dispatch.h) is a function that launches the CUDA kernel, as
//                     cuda/cuda_*.cu register them for the CUDA device. So the whole native::
//                     path (checks, output allocation, broadcasting, plans, addmm's fused
//                     bias) is the one a GPU tensor takes, and only the kernels differ;
//   cuda              a real GPU, when one is visible (inputs built on cuda:0).
//   cpu (reference kernels)  the plain loops of EMBER_KERNELS=reference (core/reference/),
//                     run under a KernelModeGuard.
#include "backends.h"

#include <new>

#include <ember/core/backend.h>
#include <ember/core/cuda_hooks.h>
#include <ember/core/dispatch.h>
#include <ember/core/kernel_mode.h>
#include <ember/core/native.h>
#include <ember/cuda/kernels/cross_entropy.cuh>
#include <ember/cuda/kernels/elementwise_ops.cuh>
#include <ember/cuda/kernels/gemm.cuh>
#include <ember/cuda/kernels/index.cuh>
#include <ember/cuda/kernels/one_hot.cuh>
#include <ember/cuda/kernels/reduce.cuh>
#include <ember/cuda/kernels/sgd.cuh>
#include <ember/cuda/kernels/softmax.cuh>

namespace ember::conformance {

namespace {

namespace gpu = ember::cuda::kernels;

// Host memory for the split (two-pass) reductions, as cuda/cuda_reduce.cu's device scratch.
class HostScratch final : public gpu::ScratchAllocator {
 public:
  void* allocate(std::size_t bytes) override { return ::operator new(bytes); }
  void release(void* pointer, std::size_t) override { ::operator delete(pointer); }
};

// The entry points cuda/cuda_*.cu register, without the stream and the device guard.
namespace emulated {
void fill(const StridedPlan& plan, Scalar value) { gpu::dispatch_fill(plan, value, nullptr); }
void copy(const StridedPlan& plan) { gpu::dispatch_copy(plan, nullptr); }
void unary(UnaryOp op, const StridedPlan& plan, const UnaryParams& params) {
  gpu::dispatch_unary(op, plan, params, nullptr);
}
void binary(BinaryOp op, const StridedPlan& plan, Scalar alpha) { gpu::dispatch_binary(op, plan, alpha, nullptr); }
void where(const StridedPlan& plan) { gpu::dispatch_where(plan, nullptr); }
void reduce(ReduceOp op, const ReducePlan& plan) {
  HostScratch scratch;
  gpu::dispatch_reduce(op, plan, nullptr, &scratch);
}
void softmax(const SoftmaxPlan& plan, bool log) { gpu::dispatch_softmax(plan, log, nullptr); }
void gemm(const GemmPlan& plan) { gpu::dispatch_gemm(plan, nullptr); }  // honours plan.bias: addmm too
void index_select(const IndexPlan& plan) { gpu::dispatch_index(gpu::IndexKind::Select, plan, nullptr); }
void index_add(const IndexPlan& plan) { gpu::dispatch_index(gpu::IndexKind::Add, plan, nullptr); }
void gather(const IndexPlan& plan) { gpu::dispatch_index(gpu::IndexKind::Gather, plan, nullptr); }
void scatter_add(const IndexPlan& plan) { gpu::dispatch_index(gpu::IndexKind::ScatterAdd, plan, nullptr); }
void cross_entropy(const CrossEntropyPlan& plan) { gpu::dispatch_cross_entropy(plan, nullptr); }
void sgd_step(const SgdPlan& plan) { gpu::dispatch_sgd(plan, nullptr); }
void one_hot(const OneHotPlan& plan) { gpu::dispatch_one_hot(plan, nullptr); }
}  // namespace emulated

// While alive, `slot` serves CPU tensors with `kernel`; then its CPU kernel (or none) again.
template <class Slot>
class CpuKernelSwap {
 public:
  CpuKernelSwap(Slot& slot, typename Slot::Kernel kernel)
      : slot_(slot), saved_(slot.has_kernel(kCPU) ? slot.kernel_for(kCPU) : nullptr) {
    slot_.register_kernel(KernelBackend::CPU, kernel);
  }
  ~CpuKernelSwap() { slot_.register_kernel(KernelBackend::CPU, saved_); }
  CpuKernelSwap(const CpuKernelSwap&) = delete;
  CpuKernelSwap& operator=(const CpuKernelSwap&) = delete;

 private:
  Slot& slot_;
  typename Slot::Kernel saved_;
};

// While alive, CPU tensors are computed by the emulated CUDA kernels, family by family.
// (Not inside reference mode: that mode's kernels come before the CPU slot's.)
struct EmulatedCudaOnCpu {
  CpuKernelSwap<decltype(fill_kernel)> fill{fill_kernel, &emulated::fill};
  CpuKernelSwap<decltype(copy_kernel)> copy{copy_kernel, &emulated::copy};
  CpuKernelSwap<decltype(unary_kernel)> unary{unary_kernel, &emulated::unary};
  CpuKernelSwap<decltype(binary_kernel)> binary{binary_kernel, &emulated::binary};
  CpuKernelSwap<decltype(where_kernel)> where{where_kernel, &emulated::where};
  CpuKernelSwap<decltype(reduce_kernel)> reduce{reduce_kernel, &emulated::reduce};
  CpuKernelSwap<decltype(softmax_kernel)> softmax{softmax_kernel, &emulated::softmax};
  CpuKernelSwap<decltype(gemm_kernel)> gemm{gemm_kernel, &emulated::gemm};
  CpuKernelSwap<decltype(addmm_kernel)> addmm{addmm_kernel, &emulated::gemm};
  CpuKernelSwap<decltype(index_select_kernel)> index_select{index_select_kernel, &emulated::index_select};
  CpuKernelSwap<decltype(index_add_kernel)> index_add{index_add_kernel, &emulated::index_add};
  CpuKernelSwap<decltype(gather_kernel)> gather{gather_kernel, &emulated::gather};
  CpuKernelSwap<decltype(scatter_add_kernel)> scatter_add{scatter_add_kernel, &emulated::scatter_add};
  CpuKernelSwap<decltype(cross_entropy_kernel)> cross_entropy{cross_entropy_kernel, &emulated::cross_entropy};
  CpuKernelSwap<decltype(sgd_step_kernel)> sgd_step{sgd_step_kernel, &emulated::sgd_step};
  CpuKernelSwap<decltype(one_hot_kernel)> one_hot{one_hot_kernel, &emulated::one_hot};
};

}  // namespace

const std::vector<SweepBackend>& backends() {
  static const std::vector<SweepBackend> list = [] {
    std::vector<SweepBackend> all{
        {"cpu", [](const std::function<Tensor(Device)>& body) { return body(kCPU); }},
        {"cpu (reference kernels)",
         [](const std::function<Tensor(Device)>& body) {
           KernelModeGuard reference(KernelMode::Reference);
           return body(kCPU);
         }},
        {"cuda (emulated)",
         [](const std::function<Tensor(Device)>& body) {
           Tensor result;
           {
             EmulatedCudaOnCpu guard;
             result = body(kCPU);
           }
           return result;
         }},
    };
    if (ember::cuda::is_available())
      all.push_back({"cuda",
                     [](const std::function<Tensor(Device)>& body) {
                       return native::to_device(body(Device(DeviceType::CUDA, 0)), kCPU);
                     },
                     /*extra_ulps=*/2});
    return all;
  }();
  return list;
}

}  // namespace ember::conformance
