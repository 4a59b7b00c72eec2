// core/cpu/gemm_kernel_avx2.cpp — the AVX2 + FMA GEMM micro-kernels (float32 and float64).
//
// Tutorial §2.4 (matrix multiplication); see core/cpu/gemm_kernels.h for the contract and
// core/cpu/gemm.cpp for the blocking around it. This file alone is compiled with
// -mavx2 -mfma (core/CMakeLists.txt); gemm.cpp calls into it only after
// __builtin_cpu_supports("avx2") && ("fma") said yes.
//
// Register blocking (the kernel itself is core/cpu/gemm_kernel_simd.h): a 6 x 16 float tile
// is 6 rows x 2 ymm = 12 accumulators, plus 2 ymm of B and 1 broadcast of A = 15 of the 16
// ymm registers. Each k step: 2 loads + 6 broadcasts for 12 FMAs; 12 independent FMA chains
// cover the FMA latency on two FMA pipes. Edge tiles use vmaskmov stores for the last vector.
#include <immintrin.h>

#include <cstdint>

#include <ember/core/cpu/gemm_kernel_simd.h>
#include <ember/core/cpu/gemm_kernels.h>

namespace ember::cpu {

namespace {

// Lane i of the mask is all ones when i < n (vmaskmov uses each lane's sign bit).
__m256i first_lanes32(int n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
__m256i first_lanes64(int n) { return _mm256_cmpgt_epi64(_mm256_set1_epi64x(n), _mm256_setr_epi64x(0, 1, 2, 3)); }

struct Ymm32 {
  using T = float;
  using V = __m256;
  static constexpr int kLanes = 8;
  static V zero() { return _mm256_setzero_ps(); }
  static V load(const T* p) { return _mm256_loadu_ps(p); }
  static void store(T* p, V v) { _mm256_storeu_ps(p, v); }
  static V load_partial(const T* p, int n) { return _mm256_maskload_ps(p, first_lanes32(n)); }
  static void store_partial(T* p, V v, int n) { _mm256_maskstore_ps(p, first_lanes32(n), v); }
  static V broadcast(const T* p) { return _mm256_broadcast_ss(p); }
  static V splat(T x) { return _mm256_set1_ps(x); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
};
struct Ymm64 {
  using T = double;
  using V = __m256d;
  static constexpr int kLanes = 4;
  static V zero() { return _mm256_setzero_pd(); }
  static V load(const T* p) { return _mm256_loadu_pd(p); }
  static void store(T* p, V v) { _mm256_storeu_pd(p, v); }
  static V load_partial(const T* p, int n) { return _mm256_maskload_pd(p, first_lanes64(n)); }
  static void store_partial(T* p, V v, int n) { _mm256_maskstore_pd(p, first_lanes64(n), v); }
  static V broadcast(const T* p) { return _mm256_broadcast_sd(p); }
  static V splat(T x) { return _mm256_set1_pd(x); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
  static V mul(V a, V b) { return _mm256_mul_pd(a, b); }
};

}  // namespace

// kc x NR of B = 256 x 16 floats = 16 KiB per panel; a 6 x 256 A panel = 6 KiB in L1.
MicroKernel<float> avx2_kernel_f32() { return simd::make_kernel<Ymm32, 6, 2>("avx2", 256, 1024); }
// Doubles: 6 x 8, the same bytes per panel row.
MicroKernel<double> avx2_kernel_f64() { return simd::make_kernel<Ymm64, 6, 2>("avx2", 256, 512); }

}  // namespace ember::cpu
