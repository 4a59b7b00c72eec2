// tests/conformance/backends.cpp — see backends.h.
//
//   cpu               core's CPU kernels, as every ember program runs them;
//   cuda (emulated)   the CUDA kernels of cuda/kernels/*.cuh on the CPU emulator
//                     (cuda/emulate/), on the same host tensors: for the duration of the
//                     call the backend registered for the CPU device is a thin adapter that
//                     launches the CUDA kernels, exactly as cuda/cuda_backend.cpp +
//                     cuda/cuda_*.cu do on a GPU. So the whole native:: path (checks, output
//                     allocation, broadcasting, plans) is the one a GPU tensor takes, and
//                     only the kernels differ;
//   cuda              a real GPU, when one is visible (inputs built on cuda:0).
#include "backends.h"

#include <cstring>
#include <new>

#include <ember/core/backend.h>
#include <ember/core/cuda_hooks.h>
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

// cuda/cuda_backend.cpp's methods with the stream and device guard left out: each one
// launches the kernel entry point that cuda/cuda_*.cu launches on a GPU.
class EmulatedCudaBackend final : public ember::Backend {
 public:
  void fill(const StridedPlan& plan, Scalar value) override { gpu::dispatch_fill(plan, value, nullptr); }
  void copy(const StridedPlan& plan) override { gpu::dispatch_copy(plan, nullptr); }
  void copy_bytes(void* dst, Device, const void* src, Device, std::size_t nbytes) override {
    if (nbytes > 0) std::memcpy(dst, src, nbytes);
  }
  void unary(UnaryOp op, const StridedPlan& plan, const UnaryParams& params) override {
    gpu::dispatch_unary(op, plan, params, nullptr);
  }
  void binary(BinaryOp op, const StridedPlan& plan, Scalar alpha) override {
    gpu::dispatch_binary(op, plan, alpha, nullptr);
  }
  void where(const StridedPlan& plan) override { gpu::dispatch_where(plan, nullptr); }
  void reduce(ReduceOp op, const ReducePlan& plan) override {
    HostScratch scratch;
    gpu::dispatch_reduce(op, plan, nullptr, &scratch);
  }
  void softmax(const SoftmaxPlan& plan, bool log) override { gpu::dispatch_softmax(plan, log, nullptr); }
  bool gemm_reads_bias() const override { return true; }
  void gemm(const GemmPlan& plan) override { gpu::dispatch_gemm(plan, nullptr); }
  void index_select(const IndexPlan& plan) override { gpu::dispatch_index(gpu::IndexKind::Select, plan, nullptr); }
  void index_add(const IndexPlan& plan) override { gpu::dispatch_index(gpu::IndexKind::Add, plan, nullptr); }
  void gather(const IndexPlan& plan) override { gpu::dispatch_index(gpu::IndexKind::Gather, plan, nullptr); }
  void scatter_add(const IndexPlan& plan) override { gpu::dispatch_index(gpu::IndexKind::ScatterAdd, plan, nullptr); }
  void cross_entropy(const CrossEntropyPlan& plan) override { gpu::dispatch_cross_entropy(plan, nullptr); }
  void sgd_step(const SgdPlan& plan) override { gpu::dispatch_sgd(plan, nullptr); }
  void one_hot(const OneHotPlan& plan) override { gpu::dispatch_one_hot(plan, nullptr); }
};

// While alive, CPU tensors are computed by the emulated CUDA kernels.
class EmulatedCudaOnCpu {
 public:
  EmulatedCudaOnCpu() : cpu_(&backend_for(kCPU)) { register_backend(DeviceType::CPU, &emulated()); }
  ~EmulatedCudaOnCpu() { register_backend(DeviceType::CPU, cpu_); }
  EmulatedCudaOnCpu(const EmulatedCudaOnCpu&) = delete;
  EmulatedCudaOnCpu& operator=(const EmulatedCudaOnCpu&) = delete;

 private:
  static EmulatedCudaBackend& emulated() {
    static EmulatedCudaBackend backend;
    return backend;
  }
  ember::Backend* cpu_;
};

}  // namespace

const std::vector<Backend>& backends() {
  static const std::vector<Backend> list = [] {
    std::vector<Backend> all{
        {"cpu", [](const std::function<Tensor(Device)>& body) { return body(kCPU); }},
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
