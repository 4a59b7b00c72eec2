// core/dispatch.h — how an op finds its kernel: one slot per kernel family, filled by the
// kernels themselves.
//
// A native op (core/elementwise.cpp, ...) checks its arguments, allocates its output,
// describes the loop as a plan and calls the family's slot with the device:
//
//     unary_kernel(out.device(), UnaryOp::Exp, plan, params);
//
// The slot holds one function pointer per backend. Each kernel file registers its own entry
// point next to its definition, with one line:
//
//     EMBER_REGISTER_KERNEL(unary_kernel, CPU, cpu::unary);           // core/cpu/elementwise_kernels.cpp
//     EMBER_REGISTER_KERNEL(unary_kernel, CUDA, unary_on_gpu);        // cuda/cuda_unary.cu
//
// so there is no class of forwarding methods between the op and the kernel, and a new
// backend adds kernels without touching core. (PyTorch's DispatchStub + REGISTER_DISPATCH is
// the same idea.) The registrations are static initializers; the build links ember_core and
// ember_cuda whole-archive so the linker keeps files nothing calls by name.
//
// The families and their signatures are listed in core/backend.h.
#pragma once

#include <array>

#include <ember/core/device.h>
#include <ember/core/error.h>

namespace ember {

// Who implements a kernel. CPUReference holds the plain loops of EMBER_KERNELS=reference
// (core/kernel_mode.h); the CPU's slot is used when a family has none.
enum class KernelBackend : int { CPU, CPUReference, CUDA };
constexpr int kNumKernelBackends = 3;

namespace detail {
// The backend that serves `device` now: CPUReference for CPU tensors in reference mode.
KernelBackend kernel_backend_for(Device device);
[[noreturn]] void throw_missing_kernel(const char* family, Device device);
}  // namespace detail

template <class Signature>
class Dispatch;

template <class Result, class... Args>
class Dispatch<Result(Args...)> {
 public:
  using Kernel = Result (*)(Args...);

  // constexpr: the table is filled with nullptrs before any registration runs, whatever
  // the order of static initialisation across files.
  constexpr explicit Dispatch(const char* family) : family_(family) {}

  void register_kernel(KernelBackend backend, Kernel kernel) { kernels_[static_cast<int>(backend)] = kernel; }

  // The kernel for `device`, or an error naming the family and device.
  Kernel kernel_for(Device device) const {
    const KernelBackend backend = detail::kernel_backend_for(device);
    Kernel kernel = kernels_[static_cast<int>(backend)];
    if (kernel == nullptr && backend == KernelBackend::CPUReference) kernel = kernels_[static_cast<int>(KernelBackend::CPU)];
    if (kernel == nullptr) detail::throw_missing_kernel(family_, device);
    return kernel;
  }

  bool has_kernel(Device device) const {
    return kernels_[static_cast<int>(device.is_cpu() ? KernelBackend::CPU : KernelBackend::CUDA)] != nullptr;
  }

  Result operator()(Device device, Args... args) const { return kernel_for(device)(args...); }

  const char* family() const { return family_; }

 private:
  const char* family_;
  std::array<Kernel, kNumKernelBackends> kernels_{};
};

namespace detail {
struct KernelRegistration {
  template <class Slot, class Kernel>
  KernelRegistration(Slot& slot, KernelBackend backend, Kernel kernel) {
    slot.register_kernel(backend, kernel);
  }
};
}  // namespace detail

#define EMBER_DISPATCH_CONCAT_INNER(a, b) a##b
#define EMBER_DISPATCH_CONCAT(a, b) EMBER_DISPATCH_CONCAT_INNER(a, b)

// Declares a kernel family (in core/backend.h) and defines its slot (in core/backend.cpp).
#define EMBER_DECLARE_DISPATCH(name, ...) extern ::ember::Dispatch<__VA_ARGS__> name
#define EMBER_DEFINE_DISPATCH(name) decltype(name) name{#name}

// Registers `kernel` as `backend`'s (CPU, CPUReference or CUDA) implementation of the family
// `slot`. At namespace scope in the file that defines the kernel.
#define EMBER_REGISTER_KERNEL(slot, backend, kernel)                                            \
  static const ::ember::detail::KernelRegistration EMBER_DISPATCH_CONCAT(ember_kernel_registration_, \
                                                                         __LINE__){              \
      slot, ::ember::KernelBackend::backend, kernel}

}  // namespace ember
