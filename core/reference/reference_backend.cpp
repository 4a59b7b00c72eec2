// core/reference/reference_backend.cpp — routes the CPU's backend calls to the reference
// loops when the kernel mode is Reference (core/kernel_mode.h).
//
// A stand-in, like core/cpu/cpu_backend.cpp: each method forwards to a reference:: function
// (reference_kernels.h), which are the unit; core/backend.cpp's backend_for(DeviceType::CPU)
// returns this object instead of the fast CPU backend in reference mode. CUDA tensors are
// not affected: backend_for(DeviceType::CUDA) always serves the CUDA kernels.
#include <cstring>

#include <ember/core/backend.h>
#include <ember/core/error.h>
#include <ember/core/reference/reference_kernels.h>

namespace ember {

namespace {

class ReferenceBackend final : public Backend {
 public:
  void fill(const StridedPlan& plan, Scalar value) override { reference::fill(plan, value); }
  void copy(const StridedPlan& plan) override { reference::copy(plan); }
  void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, std::size_t nbytes) override {
    EMBER_CHECK(dst_device.is_cpu() && src_device.is_cpu(), DeviceError,
                "CPU backend asked to copy between ", src_device, " and ", dst_device);
    if (nbytes > 0) std::memcpy(dst, src, nbytes);
  }
  void unary(UnaryOp op, const StridedPlan& plan, const UnaryParams& params) override {
    reference::unary(op, plan, params);
  }
  void binary(BinaryOp op, const StridedPlan& plan, Scalar alpha) override { reference::binary(op, plan, alpha); }
  void where(const StridedPlan& plan) override { reference::where(plan); }
  void reduce(ReduceOp op, const ReducePlan& plan) override { reference::reduce(op, plan); }
  void softmax(const SoftmaxPlan& plan, bool log) override { reference::softmax(plan, log); }
  void gemm(const GemmPlan& plan) override { reference::gemm(plan); }
  void index_select(const IndexPlan& plan) override { reference::index_select(plan); }
  void index_add(const IndexPlan& plan) override { reference::index_add(plan); }
  void gather(const IndexPlan& plan) override { reference::gather(plan); }
  void scatter_add(const IndexPlan& plan) override { reference::scatter_add(plan); }
  void cross_entropy(const CrossEntropyPlan& plan) override { reference::cross_entropy(plan); }
  void sgd_step(const SgdPlan& plan) override { reference::sgd_step(plan); }
  void one_hot(const OneHotPlan& plan) override { reference::one_hot(plan); }
};

}  // namespace

Backend& reference_backend() {
  static ReferenceBackend backend;
  return backend;
}

}  // namespace ember
