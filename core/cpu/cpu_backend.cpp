// core/cpu/cpu_backend.cpp — the CPU implementation of core/backend.h.
//
// A thin class: each method forwards to a kernel in core/cpu/*.cpp. Keeping the class
// separate from the kernels lets a reader find "what does the CPU do for X" in one place.
#include <cstring>

#include <ember/core/backend.h>
#include <ember/core/cpu/cpu_kernels.h>
#include <ember/core/error.h>

namespace ember {

namespace {

class CpuBackend final : public Backend {
 public:
  void fill(const StridedPlan& plan, Scalar value) override { cpu::fill(plan, value); }
  void copy(const StridedPlan& plan) override { cpu::copy(plan); }
  void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, std::size_t nbytes) override {
    EMBER_CHECK(dst_device.is_cpu() && src_device.is_cpu(), DeviceError,
                "CPU backend asked to copy between ", src_device, " and ", dst_device);
    if (nbytes > 0) std::memcpy(dst, src, nbytes);
  }
  void unary(UnaryOp op, const StridedPlan& plan, const UnaryParams& params) override { cpu::unary(op, plan, params); }
  void binary(BinaryOp op, const StridedPlan& plan, Scalar alpha) override { cpu::binary(op, plan, alpha); }
  void where(const StridedPlan& plan) override { cpu::where(plan); }
  void reduce(ReduceOp op, const ReducePlan& plan) override { cpu::reduce(op, plan); }
  void softmax(const SoftmaxPlan& plan, bool log) override { cpu::softmax(plan, log); }
  void gemm(const GemmPlan& plan) override { cpu::gemm(plan); }
  void index_select(const IndexPlan& plan) override { cpu::index_select(plan); }
  void index_add(const IndexPlan& plan) override { cpu::index_add(plan); }
  void gather(const IndexPlan& plan) override { cpu::gather(plan); }
  void scatter_add(const IndexPlan& plan) override { cpu::scatter_add(plan); }
  void cross_entropy(const CrossEntropyPlan& plan) override { cpu::cross_entropy(plan); }
  void sgd_step(const SgdPlan& plan) override { cpu::sgd_step(plan); }
  void one_hot(const OneHotPlan& plan) override { cpu::one_hot(plan); }
};

}  // namespace

Backend& cpu_backend() {
  static CpuBackend backend;
  return backend;
}

}  // namespace ember
