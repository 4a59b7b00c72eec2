// core/kernel_mode.cpp — see kernel_mode.h.
#include <ember/core/kernel_mode.h>

#include <atomic>
#include <cstdlib>
#include <string>

#include <ember/core/error.h>

namespace ember {

std::atomic<int> detail::kernel_mode_state{detail::kKernelModeUnknown};

KernelMode parse_kernel_mode(std::string_view value) {
  if (value.empty() || value == "fast") return KernelMode::Fast;
  if (value == "reference") return KernelMode::Reference;
  throw ValueError("EMBER_KERNELS must be 'fast' or 'reference' (or unset, meaning 'fast'), got '" +
                   std::string(value) + "'");
}

KernelMode kernel_mode_from_environment() {
  const char* text = std::getenv("EMBER_KERNELS");
  return parse_kernel_mode(text == nullptr ? std::string_view() : std::string_view(text));
}

KernelMode detail::kernel_mode_first_read() {
  // Two threads racing here read the same value; the exchange keeps a set_kernel_mode() that
  // came in between.
  const KernelMode from_environment = kernel_mode_from_environment();  // may throw: stays unknown
  int expected = kKernelModeUnknown;
  kernel_mode_state.compare_exchange_strong(expected, static_cast<int>(from_environment), std::memory_order_relaxed);
  return static_cast<KernelMode>(kernel_mode_state.load(std::memory_order_relaxed));
}

void set_kernel_mode(KernelMode mode) {
  detail::kernel_mode_state.store(static_cast<int>(mode), std::memory_order_relaxed);
}

const char* kernel_mode_name(KernelMode mode) { return mode == KernelMode::Reference ? "reference" : "fast"; }

}  // namespace ember
