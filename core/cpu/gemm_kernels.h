// core/cpu/gemm_kernels.h — the GEMM micro-kernels and how one is chosen at run time.
//
// Tutorial §2.4 (matrix multiplication). core/cpu/gemm.cpp owns the cache blocking and
// packing; a micro-kernel only multiplies one packed MR-row panel of A by one packed
// NR-column panel of B and updates an MR x NR tile of C. Each SIMD kernel lives in its own
// translation unit compiled with its own instruction-set flags (core/CMakeLists.txt), so
// the rest of the library still runs on any x86-64 CPU:
//   gemm_kernel_avx512.cpp   8 x 32 floats / 8 x 16 doubles in zmm registers
//   gemm_kernel_avx2.cpp     6 x 16 floats / 6 x 8 doubles in ymm registers (with FMA)
//   gemm.cpp                 the portable C++ kernel (every dtype, every CPU)
// Which one runs is decided by cpuid (__builtin_cpu_supports) unless the environment
// variable EMBER_GEMM_KERNEL=portable|avx2|avx512 forces one (tests and benchmarks).
#pragma once

#include <cstdint>
#include <string>

namespace ember::cpu {

// Updates the MR x NR tile at c (row stride rs_c, column stride 1):
//   C = alpha * sum_p a_panel[p] (outer) b_panel[p] + (read_c ? beta * C : 0)
// a_panel holds kc steps of MR values, b_panel kc steps of NR values (zero-padded).
// read_c == false never reads C, so C may hold NaNs or garbage (beta == 0 semantics).
template <class T>
using MicroKernelFn = void (*)(std::int64_t kc, const T* a_panel, const T* b_panel, T* c, std::int64_t rs_c,
                               T alpha, T beta, bool read_c);

// A micro-kernel plus the cache blocking that suits its tile (kc x NR of B in L1,
// mc x kc of A in L2, kc x nc of B in L3).
template <class T>
struct MicroKernel {
  const char* name = "portable";
  std::int64_t mr = 0, nr = 0;
  std::int64_t mc = 0, kc = 0, nc = 0;
  MicroKernelFn<T> run = nullptr;
};

// The SIMD kernels (defined in their own files). Call only when the CPU supports them.
MicroKernel<float> avx512_kernel_f32();
MicroKernel<double> avx512_kernel_f64();
MicroKernel<float> avx2_kernel_f32();
MicroKernel<double> avx2_kernel_f64();

// "portable", "avx2" or "avx512": is this kernel usable on this CPU?
bool gemm_kernel_available(const std::string& name);
// The kernel a float32 GEMM would use right now (honours EMBER_GEMM_KERNEL). Throws
// ValueError for an unknown name or a kernel this CPU cannot run.
std::string active_gemm_kernel_name();

}  // namespace ember::cpu
