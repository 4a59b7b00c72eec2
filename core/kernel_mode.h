// core/kernel_mode.h — which kernels run an op on the CPU: the fast ones or the reference ones.
//
// Issue 18 item 4. ember has two CPU implementations of every kernel:
//   KernelMode::Fast       core/cpu/ — threads, blocked SIMD GEMM, streaming stores, fused
//                          training ops. The default.
//   KernelMode::Reference  core/reference/ — one plain scalar loop per kernel, no threads, no
//                          intrinsics, and the training step unfused (Linear then ReLU,
//                          log_softmax then nll_loss, SGD as tensor ops). The code to step
//                          through first (docs/reading-order.md, docs/debugging.md), and the
//                          yardstick the fast kernels are tested against.
// Both compute with the same element functions (core/element_functions.h), so they agree
// bit for bit except where a fast kernel reorders a sum (tests/core/test_reference_kernels.cpp
// says where and by how much).
//
// The mode starts as the environment variable EMBER_KERNELS says (`fast`, `reference`;
// unset or empty: fast), read once, at the first op; set_kernel_mode() or a KernelModeGuard
// override it. It is process-wide, not per thread: an op started in one mode finishes in it,
// but switching while other threads run ops gives those threads a mix.
// The switch itself is core/dispatch.h's: in reference mode a CPU op takes its family's
// CPUReference kernel (core/reference/ registers them). CUDA tensors keep their CUDA kernels
// in either mode (the reference loops are CPU code); the unfused training step applies to
// them too.
#pragma once

#include <atomic>
#include <string_view>

namespace ember {

enum class KernelMode { Fast, Reference };

namespace detail {
// -1 until the mode is known (EMBER_KERNELS not read yet and no set_kernel_mode() call), then
// the KernelMode's value. Relaxed loads suffice: the mode guards no other data, it only
// chooses which code runs.
inline constexpr int kKernelModeUnknown = -1;
extern std::atomic<int> kernel_mode_state;
KernelMode kernel_mode_first_read();  // reads EMBER_KERNELS into kernel_mode_state
}  // namespace detail

// The current mode. The first call reads EMBER_KERNELS and throws ValueError when it holds
// anything but `fast`, `reference` or nothing (and throws again on every call until the
// variable is fixed or set_kernel_mode() chooses a mode). After that: one relaxed atomic
// load, inlined into the caller (core/backend.cpp's kernel_backend_for() asks once per op).
inline KernelMode kernel_mode() {
  const int mode = detail::kernel_mode_state.load(std::memory_order_relaxed);
  if (mode != detail::kKernelModeUnknown) [[likely]] return static_cast<KernelMode>(mode);
  return detail::kernel_mode_first_read();
}
void set_kernel_mode(KernelMode mode);

// `fast` or `reference`.
const char* kernel_mode_name(KernelMode mode);

// The mode named by an EMBER_KERNELS value (empty: Fast); ValueError naming the variable,
// the value and the accepted ones otherwise. Exposed for tests and for the CLI, which
// reports a bad value as a usage error before it runs anything.
KernelMode parse_kernel_mode(std::string_view value);
// parse_kernel_mode(getenv("EMBER_KERNELS")), read now (unset: Fast).
KernelMode kernel_mode_from_environment();

// Sets a mode for a scope and restores the previous one on exit:
//     { KernelModeGuard reference(KernelMode::Reference); auto y = model.forward(x); }
class KernelModeGuard {
 public:
  explicit KernelModeGuard(KernelMode mode) : previous_(kernel_mode()) { set_kernel_mode(mode); }
  ~KernelModeGuard() { set_kernel_mode(previous_); }
  KernelModeGuard(const KernelModeGuard&) = delete;
  KernelModeGuard& operator=(const KernelModeGuard&) = delete;

 private:
  KernelMode previous_;
};

}  // namespace ember
