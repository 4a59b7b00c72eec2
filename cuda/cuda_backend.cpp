// cuda/cuda_backend.cpp — the Backend (core/backend.h) for DeviceType::CUDA.
//
// A thin class, like the CPU one: each method switches to the plan's device (a DeviceGuard:
// plans carry the index of the device their tensors live on, so an op on cuda:1 tensors runs
// on cuda:1 whatever device is current, as PyTorch's device guards do) and forwards to a
// kernel entry point in cuda/cuda_ops.h on that device's stream. It is registered by a
// static constructor; the top-level CMakeLists links ember_cuda whole-archive into
// ember::ember so the constructor is not dropped by the linker. Tutorial appendix:
// tensor.to("cuda") and GPU training.
#include <ember/core/backend.h>
#include <ember/cuda/cuda_check.h>
#include <ember/cuda/cuda_context.h>
#include <ember/cuda/cuda_ops.h>

namespace ember::cuda {

namespace {

class CudaBackend final : public Backend {
 public:
  void fill(const StridedPlan& plan, Scalar value) override {
    DeviceGuard guard(plan.device);
    ops::fill(plan, value, current_stream());
  }
  void copy(const StridedPlan& plan) override {
    DeviceGuard guard(plan.device);
    ops::copy(plan, current_stream());
  }

  // Host↔device: cudaMemcpy (with unified addressing cudaMemcpyDefault infers the direction
  // from the pointers); a copy to the host returns when the data has arrived (cudaMemcpy
  // waits for the kernels queued before it on the legacy stream). GPU↔GPU: cudaMemcpyPeer,
  // which is ordered after the work already queued on both devices and before later work
  // on either — no host staging, direct over NVLink/PCIe when peer access is possible.
  void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, std::size_t nbytes) override {
    if (nbytes == 0) return;
    EMBER_CHECK(dst_device.is_cuda() || src_device.is_cuda(), DeviceError,
                "CUDA backend asked to copy between ", src_device, " and ", dst_device);
    if (copy_between_gpus(dst, dst_device, src, src_device, nbytes)) return;
    const int device = resolve_device_index(dst_device.is_cuda() ? dst_device : src_device);
    DeviceGuard guard(device);
    EMBER_CUDA_CHECK(cudaMemcpy(dst, src, nbytes, cudaMemcpyDefault));
  }
  // Queued on the device's stream, so later kernels on it see the bytes; truly
  // asynchronous only from pinned host memory (core/pinned_memory.cpp), where the DMA
  // engine reads the buffer itself — from pageable memory CUDA stages and waits. Between
  // two GPUs it is the ordered cudaMemcpyPeer above (an async peer copy on one device's
  // stream would not wait for the other device's kernels that produce the source).
  void copy_bytes_async(void* dst, Device dst_device, const void* src, Device src_device, std::size_t nbytes) override {
    if (nbytes == 0) return;
    EMBER_CHECK(dst_device.is_cuda() || src_device.is_cuda(), DeviceError,
                "CUDA backend asked to copy between ", src_device, " and ", dst_device);
    if (copy_between_gpus(dst, dst_device, src, src_device, nbytes)) return;
    DeviceGuard guard(resolve_device_index(dst_device.is_cuda() ? dst_device : src_device));
    EMBER_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDefault, current_stream()));
  }

  void unary(UnaryOp op, const StridedPlan& plan, const UnaryParams& params) override {
    DeviceGuard guard(plan.device);
    ops::unary(op, plan, params, current_stream());
  }
  void binary(BinaryOp op, const StridedPlan& plan, Scalar alpha) override {
    DeviceGuard guard(plan.device);
    ops::binary(op, plan, alpha, current_stream());
  }
  void where(const StridedPlan& plan) override {
    DeviceGuard guard(plan.device);
    ops::where(plan, current_stream());
  }
  void reduce(ReduceOp op, const ReducePlan& plan) override {
    DeviceGuard guard(plan.device);
    ops::reduce(op, plan, current_stream());
  }
  void softmax(const SoftmaxPlan& plan, bool log) override {
    DeviceGuard guard(plan.device);
    ops::softmax(plan, log, current_stream());
  }
  bool gemm_reads_bias() const override { return true; }  // both GEMM paths below honour plan.bias
  void gemm(const GemmPlan& plan) override {
    DeviceGuard guard(plan.device);
    // cuBLAS when selected and the strides fit its layouts; ember's kernel otherwise.
    if (selected_matmul_backend() == MatmulBackend::Cublas && ops::gemm_cublas(plan, current_stream())) return;
    ops::gemm_ember(plan, current_stream());
  }
  void random_fill(const StridedPlan& plan, const PhiloxFill& fill) override {
    DeviceGuard guard(plan.device);
    ops::random_fill(plan, fill, current_stream());
  }
  void index_select(const IndexPlan& plan) override {
    DeviceGuard guard(plan.device);
    ops::index_select(plan, current_stream());
  }
  void index_add(const IndexPlan& plan) override {
    DeviceGuard guard(plan.device);
    ops::index_add(plan, current_stream());
  }
  void gather(const IndexPlan& plan) override {
    DeviceGuard guard(plan.device);
    ops::gather(plan, current_stream());
  }
  void scatter_add(const IndexPlan& plan) override {
    DeviceGuard guard(plan.device);
    ops::scatter_add(plan, current_stream());
  }
  void cross_entropy(const CrossEntropyPlan& plan) override {
    DeviceGuard guard(plan.device);
    ops::cross_entropy(plan, current_stream());
  }
  void sgd_step(const SgdPlan& plan) override {
    DeviceGuard guard(plan.device);
    ops::sgd_step(plan, current_stream());
  }
  void one_hot(const OneHotPlan& plan) override {
    DeviceGuard guard(plan.device);
    ops::one_hot(plan, current_stream());
  }

 private:
  // True (and done) when both sides are GPUs; a copy within one GPU is a plain cudaMemcpy.
  static bool copy_between_gpus(void* dst, Device dst_device, const void* src, Device src_device, std::size_t nbytes) {
    if (!dst_device.is_cuda() || !src_device.is_cuda()) return false;
    const int to = resolve_device_index(dst_device), from = resolve_device_index(src_device);
    DeviceGuard guard(to);
    if (to == from) {
      EMBER_CUDA_CHECK(cudaMemcpy(dst, src, nbytes, cudaMemcpyDeviceToDevice));
    } else {
      EMBER_CUDA_CHECK(cudaMemcpyPeer(dst, to, src, from, nbytes));
    }
    return true;
  }
};

struct RegisterBackend {
  RegisterBackend() {
    static CudaBackend backend;
    register_backend(DeviceType::CUDA, &backend);
  }
} register_backend_at_startup;

}  // namespace

}  // namespace ember::cuda
