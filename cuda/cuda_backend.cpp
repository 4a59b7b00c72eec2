// cuda/cuda_backend.cpp — the Backend (core/backend.h) for DeviceType::CUDA.
//
// A thin class, like the CPU one: each method forwards to a kernel entry point in
// cuda/cuda_ops.h on the current stream. It is registered by a static constructor; the
// top-level CMakeLists links ember_cuda whole-archive into ember::ember so the constructor
// is not dropped by the linker. Tutorial appendix: tensor.to("cuda") and GPU training.
#include <ember/core/backend.h>
#include <ember/cuda/cuda_check.h>
#include <ember/cuda/cuda_context.h>
#include <ember/cuda/cuda_ops.h>

namespace ember::cuda {

namespace {

class CudaBackend final : public Backend {
 public:
  void fill(const StridedPlan& plan, Scalar value) override { ops::fill(plan, value, current_stream()); }
  void copy(const StridedPlan& plan) override { ops::copy(plan, current_stream()); }

  // Host↔device and device↔device. With unified addressing cudaMemcpyDefault infers the
  // direction from the pointers. A copy to the host returns when the data has arrived
  // (cudaMemcpy waits for the kernels queued before it on the legacy stream).
  void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, std::size_t nbytes) override {
    if (nbytes == 0) return;
    EMBER_CHECK(dst_device.is_cuda() || src_device.is_cuda(), DeviceError,
                "CUDA backend asked to copy between ", src_device, " and ", dst_device);
    const int device = resolve_device_index(dst_device.is_cuda() ? dst_device : src_device);
    DeviceGuard guard(device);
    EMBER_CUDA_CHECK(cudaMemcpy(dst, src, nbytes, cudaMemcpyDefault));
  }
  // Queued on the device's stream, so later kernels on it see the bytes; truly
  // asynchronous only from pinned host memory (core/pinned_memory.cpp), where the DMA
  // engine reads the buffer itself — from pageable memory CUDA stages and waits.
  void copy_bytes_async(void* dst, Device dst_device, const void* src, Device src_device, std::size_t nbytes) override {
    if (nbytes == 0) return;
    EMBER_CHECK(dst_device.is_cuda() || src_device.is_cuda(), DeviceError,
                "CUDA backend asked to copy between ", src_device, " and ", dst_device);
    DeviceGuard guard(resolve_device_index(dst_device.is_cuda() ? dst_device : src_device));
    EMBER_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDefault, current_stream()));
  }

  void unary(UnaryOp op, const StridedPlan& plan, const UnaryParams& params) override {
    ops::unary(op, plan, params, current_stream());
  }
  void binary(BinaryOp op, const StridedPlan& plan, Scalar alpha) override {
    ops::binary(op, plan, alpha, current_stream());
  }
  void where(const StridedPlan& plan) override { ops::where(plan, current_stream()); }
  void reduce(ReduceOp op, const ReducePlan& plan) override { ops::reduce(op, plan, current_stream()); }
  void softmax(const SoftmaxPlan& plan, bool log) override { ops::softmax(plan, log, current_stream()); }
  void gemm(const GemmPlan& plan) override {
    // cuBLAS when selected and the strides fit its layouts; ember's kernel otherwise.
    if (selected_matmul_backend() == MatmulBackend::Cublas && ops::gemm_cublas(plan, current_stream())) return;
    ops::gemm_ember(plan, current_stream());
  }
  void index_select(const IndexPlan& plan) override { ops::index_select(plan, current_stream()); }
  void index_add(const IndexPlan& plan) override { ops::index_add(plan, current_stream()); }
  void gather(const IndexPlan& plan) override { ops::gather(plan, current_stream()); }
  void scatter_add(const IndexPlan& plan) override { ops::scatter_add(plan, current_stream()); }
  void cross_entropy(const CrossEntropyPlan& plan) override { ops::cross_entropy(plan, current_stream()); }
  void sgd_step(const SgdPlan& plan) override { ops::sgd_step(plan, current_stream()); }
  void one_hot(const OneHotPlan& plan) override { ops::one_hot(plan, current_stream()); }
};

struct RegisterBackend {
  RegisterBackend() {
    static CudaBackend backend;
    register_backend(DeviceType::CUDA, &backend);
  }
} register_backend_at_startup;

}  // namespace

}  // namespace ember::cuda
