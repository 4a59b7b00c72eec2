// tests/support/forced_gemm_kernel.h — forces one CPU GEMM micro-kernel for a scope.
//
// Sets EMBER_GEMM_KERNEL (core/cpu/gemm_kernels.h: portable, avx2 or avx512) for the life of
// the object, then restores the previous value, so a test can run the portable fallback, the
// AVX2 kernel or the float32 path of a bfloat16 product on a machine that would otherwise
// always pick AVX-512. The library keeps the value it read first, so each change is followed
// by reload_gemm_kernel_choice().
#pragma once

#include <cstdlib>
#include <string>

#include <ember/core/cpu/gemm_kernels.h>

namespace ember::testing {

class ForcedKernel {
 public:
  explicit ForcedKernel(const std::string& name) {
    const char* old = std::getenv("EMBER_GEMM_KERNEL");
    had_old_ = old != nullptr;
    if (had_old_) old_ = old;
    ::setenv("EMBER_GEMM_KERNEL", name.c_str(), 1);
    cpu::reload_gemm_kernel_choice();
  }
  ~ForcedKernel() {
    if (had_old_)
      ::setenv("EMBER_GEMM_KERNEL", old_.c_str(), 1);
    else
      ::unsetenv("EMBER_GEMM_KERNEL");
    cpu::reload_gemm_kernel_choice();
  }
  ForcedKernel(const ForcedKernel&) = delete;
  ForcedKernel& operator=(const ForcedKernel&) = delete;

 private:
  bool had_old_ = false;
  std::string old_;
};

}  // namespace ember::testing
