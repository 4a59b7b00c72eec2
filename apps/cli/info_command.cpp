// apps/cli/info_command.cpp — `ember info`: what this ember is and what it can run on.
//
// Prints the version, how it was built (build type, CUDA backend and architectures, and
// whether the distributed layer has NCCL and Gloo — asked of that layer at run time, as
// torch.distributed.is_nccl_available() does), the GPUs found (through core/cuda_hooks.h,
// so a CPU-only build simply reports none), the CPU's SIMD features (read with the cpuid
// instruction), the GEMM micro-kernel the CPU backend actually uses (core/cpu/gemm_kernels.h:
// chosen at run time, EMBER_GEMM_KERNEL overrides it) and the number of threads ember's
// parallel_for uses. Every value comes from the code that acts on it, never from a copy.
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <ember/core/cpu/gemm_kernels.h>
#include <ember/core/cuda_hooks.h>
#include <ember/core/error.h>
#include <ember/core/kernel_mode.h>
#include <ember/core/parallel.h>
#include <ember/distributed/process_group.h>

#include "options.h"

#ifndef EMBER_VERSION_STRING
#define EMBER_VERSION_STRING "unknown"
#endif
#ifndef EMBER_BUILD_TYPE_STRING
#define EMBER_BUILD_TYPE_STRING "unknown"
#endif
#ifndef EMBER_CUDA_ARCHITECTURES_STRING
#define EMBER_CUDA_ARCHITECTURES_STRING ""
#endif

namespace ember::cli {

namespace {

struct CpuFeatures {
  bool avx2 = false, fma = false, avx512f = false;
};

// A feature is usable only if the CPU has it *and* the OS saves its registers on a context
// switch (XGETBV's XCR0 bits): both checks, as a run-time dispatcher must do.
CpuFeatures detect_cpu_features() {
  CpuFeatures features;
#if defined(__x86_64__) || defined(__i386__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return features;
  bool osxsave = (ecx >> 27) & 1u, avx = (ecx >> 28) & 1u, fma = (ecx >> 12) & 1u;
  if (!osxsave || !avx) return features;
  unsigned xcr0_low = 0, xcr0_high = 0;
  __asm__("xgetbv" : "=a"(xcr0_low), "=d"(xcr0_high) : "c"(0));
  bool ymm_saved = (xcr0_low & 0x6u) == 0x6u;            // SSE and AVX state
  bool zmm_saved = ymm_saved && (xcr0_low & 0xE0u) == 0xE0u;  // opmask and ZMM state
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return features;
  features.avx2 = ymm_saved && ((ebx >> 5) & 1u);
  features.fma = ymm_saved && fma;
  features.avx512f = zmm_saved && ((ebx >> 16) & 1u);
#endif
  return features;
}

const char* yes_no(bool value) { return value ? "yes" : "no"; }

}  // namespace

int run_info() {
  std::cout << "ember " << EMBER_VERSION_STRING << "\n";
  std::cout << "build:\n";
  std::cout << "  build type:          " << EMBER_BUILD_TYPE_STRING << "\n";
  std::cout << "  CUDA backend:        " << (cuda::is_built() ? "on" : "off") << "\n";
  std::string architectures = EMBER_CUDA_ARCHITECTURES_STRING;
  std::cout << "  CUDA architectures:  " << (architectures.empty() ? "-" : architectures) << "\n";
  std::cout << "  NCCL:                " << yes_no(distributed::is_nccl_available()) << "\n";
  std::cout << "  Gloo:                " << yes_no(distributed::is_gloo_available()) << "\n";

  int gpus = cuda::device_count();
  std::cout << "devices:\n";
  std::cout << "  cpu\n";
  for (int index = 0; index < gpus; ++index) {
    cuda::DeviceProperties properties = cuda::get_device_properties(index);
    std::cout << "  cuda:" << index << "  " << properties.name << ", "
              << properties.total_memory / (1024 * 1024) << " MiB, compute capability " << properties.major << "."
              << properties.minor << ", " << properties.multiprocessors << " SMs\n";
  }
  if (gpus == 0) std::cout << "  (no CUDA device" << (cuda::is_built() ? " found" : ": built without CUDA") << ")\n";

  CpuFeatures features = detect_cpu_features();
  std::cout << "cpu:\n";
  std::cout << "  AVX2:                " << yes_no(features.avx2) << "\n";
  std::cout << "  FMA:                 " << yes_no(features.fma) << "\n";
  std::cout << "  AVX-512F:            " << yes_no(features.avx512f) << "\n";
  // The kernel a float32 matmul runs (the same call gemm.cpp makes, so never out of date).
  const char* forced = std::getenv("EMBER_GEMM_KERNEL");
  bool is_forced = forced != nullptr && *forced != '\0';
  std::string kernel_problem;
  std::cout << "  GEMM micro-kernel:   ";
  try {
    std::cout << cpu::active_gemm_kernel_name()
              << (is_forced ? " (set by EMBER_GEMM_KERNEL)" : " (the best this CPU runs; EMBER_GEMM_KERNEL overrides)")
              << "\n";
  } catch (const ValueError& error) {
    kernel_problem = error.what();
    std::cout << "- (" << kernel_problem << ")\n";
  }
  // The kernel a bfloat16 matmul runs (core/cpu/gemm_kernels.h), again the library's own answer.
  std::cout << "  bfloat16 GEMM:       ";
  if (!kernel_problem.empty()) {
    std::cout << "- (see the GEMM micro-kernel)\n";
  } else {
    try {
      if (cpu::amx_bfloat16_usable()) std::cout << "AMX tiles (tdpbf16ps; EMBER_AMX=0 turns them off)\n";
      else if (cpu::bfloat16_gemm_usable()) std::cout << "AVX512-BF16 (vdpbf16ps)\n";
      else std::cout << "float32 (operands widened)\n";
    } catch (const ValueError& error) {
      kernel_problem = error.what();
      std::cout << "- (" << kernel_problem << ")\n";
    }
  }
  std::cout << "  hardware threads:    " << std::thread::hardware_concurrency() << "\n";
  std::cout << "  ember threads:       " << get_num_threads() << "\n";
  // The CPU kernels every op runs (core/kernel_mode.h); main.cpp has already refused a bad
  // EMBER_KERNELS.
  const KernelMode mode = kernel_mode();
  std::cout << "  kernels:             " << kernel_mode_name(mode)
            << (mode == KernelMode::Reference ? " (set by EMBER_KERNELS)"
                                              : " (EMBER_KERNELS=reference runs the reference loops)")
            << "\n";
  // A bad EMBER_GEMM_KERNEL or EMBER_AMX would stop every matmul: report it like any other error.
  EMBER_CHECK(kernel_problem.empty(), ValueError, kernel_problem);
  return 0;
}

}  // namespace ember::cli
