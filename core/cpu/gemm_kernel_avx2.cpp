// core/cpu/gemm_kernel_avx2.cpp — the AVX2 + FMA GEMM micro-kernels (float32 and float64).
//
// Tutorial §2.4 (matrix multiplication); see core/cpu/gemm_kernels.h for the contract and
// core/cpu/gemm.cpp for the blocking around it. This file alone is compiled with
// -mavx2 -mfma (core/CMakeLists.txt); gemm.cpp calls into it only after
// __builtin_cpu_supports("avx2") && ("fma") said yes.
//
// Register blocking: a 6 x 16 float tile is 6 rows x 2 ymm = 12 accumulators, plus 2 ymm of
// B and 1 broadcast of A = 15 of the 16 ymm registers. 12 independent FMA chains hide the
// FMA latency on two FMA pipes.
#include <immintrin.h>

#include <cstdint>

#include <ember/core/cpu/gemm_kernels.h>

namespace ember::cpu {

namespace {

struct Ymm32 {
  using T = float;
  using V = __m256;
  static constexpr int kLanes = 8;
  static V zero() { return _mm256_setzero_ps(); }
  static V load(const T* p) { return _mm256_loadu_ps(p); }
  static void store(T* p, V v) { _mm256_storeu_ps(p, v); }
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
  static V broadcast(const T* p) { return _mm256_broadcast_sd(p); }
  static V splat(T x) { return _mm256_set1_pd(x); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
  static V mul(V a, V b) { return _mm256_mul_pd(a, b); }
};

// MR rows x (COLS vectors) tile; fixed-bound loops unroll so `acc` stays in registers.
template <class Ops, int MR, int COLS>
void micro_kernel(std::int64_t kc, const typename Ops::T* a_panel, const typename Ops::T* b_panel,
                  typename Ops::T* c, std::int64_t rs_c, typename Ops::T alpha, typename Ops::T beta, bool read_c) {
  using V = typename Ops::V;
  constexpr int NR = COLS * Ops::kLanes;
  V acc[MR][COLS];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < COLS; ++j) acc[i][j] = Ops::zero();

  for (std::int64_t p = 0; p < kc; ++p) {
    V b[COLS];
#pragma GCC unroll 4
    for (int j = 0; j < COLS; ++j) b[j] = Ops::load(b_panel + j * Ops::kLanes);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      V a = Ops::broadcast(a_panel + i);
#pragma GCC unroll 4
      for (int j = 0; j < COLS; ++j) acc[i][j] = Ops::fma(a, b[j], acc[i][j]);
    }
    a_panel += MR;
    b_panel += NR;
  }

  const V alpha_v = Ops::splat(alpha), beta_v = Ops::splat(beta);
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
    auto* row = c + i * rs_c;
#pragma GCC unroll 4
    for (int j = 0; j < COLS; ++j) {
      V value = Ops::mul(alpha_v, acc[i][j]);
      // beta == 0 must not read C (it may hold NaNs), hence a flag rather than beta * C.
      if (read_c) value = Ops::fma(beta_v, Ops::load(row + j * Ops::kLanes), value);
      Ops::store(row + j * Ops::kLanes, value);
    }
  }
}

}  // namespace

// kc x NR of B = 256 x 16 x 4 = 16 KiB (L1); mc x kc of A = 144 x 256 x 4 = 144 KiB (L2).
MicroKernel<float> avx2_kernel_f32() { return {"avx2", 6, 16, 144, 256, 2048, &micro_kernel<Ymm32, 6, 2>}; }
MicroKernel<double> avx2_kernel_f64() { return {"avx2", 6, 8, 144, 256, 2048, &micro_kernel<Ymm64, 6, 2>}; }

}  // namespace ember::cpu
