// core/cpu/gemm_kernel_avx512.cpp — the AVX-512 GEMM micro-kernels (float32 and float64).
//
// Tutorial §2.4 (matrix multiplication); see core/cpu/gemm_kernels.h for the contract and
// core/cpu/gemm.cpp for the blocking around it. This file alone is compiled with
// -mavx512f -mavx512vl -mfma (core/CMakeLists.txt); gemm.cpp calls into it only after
// __builtin_cpu_supports("avx512f") said yes, so the library still runs on older CPUs.
//
// Register blocking: an 8 x 32 float tile is 8 rows x 2 zmm = 16 accumulators. Each k step
// loads 2 zmm of B and broadcasts 8 values of A: 16 FMAs against 10 loads. Sixteen
// independent FMA chains hide the FMA latency (4 cycles) on two FMA pipes, and 16 + 2 + 1
// registers fit in the 32 zmm registers. 8 rows divide the common batch size 128 exactly.
#include <immintrin.h>

#include <cstdint>

#include <ember/core/cpu/gemm_kernels.h>

namespace ember::cpu {

namespace {

// The two element types differ only in vector width and intrinsic names.
struct Zmm32 {
  using T = float;
  using V = __m512;
  static constexpr int kLanes = 16;
  static V zero() { return _mm512_setzero_ps(); }
  static V load(const T* p) { return _mm512_loadu_ps(p); }
  static void store(T* p, V v) { _mm512_storeu_ps(p, v); }
  static V broadcast(const T* p) { return _mm512_set1_ps(*p); }
  static V splat(T x) { return _mm512_set1_ps(x); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
};
struct Zmm64 {
  using T = double;
  using V = __m512d;
  static constexpr int kLanes = 8;
  static V zero() { return _mm512_setzero_pd(); }
  static V load(const T* p) { return _mm512_loadu_pd(p); }
  static void store(T* p, V v) { _mm512_storeu_pd(p, v); }
  static V broadcast(const T* p) { return _mm512_set1_pd(*p); }
  static V splat(T x) { return _mm512_set1_pd(x); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_pd(a, b, c); }
  static V mul(V a, V b) { return _mm512_mul_pd(a, b); }
};

// MR rows x (COLS vectors) tile. The fixed-bound loops are fully unrolled, so `acc` lives
// in registers for the whole k loop.
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
    // Fetch the B panel a few steps ahead: it streams from L1/L2 once per tile.
    _mm_prefetch(reinterpret_cast<const char*>(b_panel + 8 * NR), _MM_HINT_T0);
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

// Block sizes for Zen-class cores (48 KiB L1d, 1 MiB L2 per core): a kc x NR panel of B is
// 256 x 32 x 4 = 32 KiB (L1), an mc x kc block of A is 192 x 256 x 4 = 192 KiB (L2).
MicroKernel<float> avx512_kernel_f32() { return {"avx512", 8, 32, 192, 256, 2048, &micro_kernel<Zmm32, 8, 2>}; }
// Doubles: the same bytes per panel, so half the columns per zmm and half the kc.
MicroKernel<double> avx512_kernel_f64() { return {"avx512", 8, 16, 192, 128, 2048, &micro_kernel<Zmm64, 8, 2>}; }

}  // namespace ember::cpu
