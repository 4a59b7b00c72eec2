// core/cpu/gemm_kernel_avx512.cpp — the AVX-512 GEMM micro-kernels (float32 and float64) and
// a vectorised transposing pack for float32.
//
// Tutorial §2.4 (matrix multiplication); see core/cpu/gemm_kernels.h for the contract and
// core/cpu/gemm.cpp for the blocking around it. This file alone is compiled with
// -mavx512f -mavx512vl -mfma (core/CMakeLists.txt); gemm.cpp calls into it only after
// __builtin_cpu_supports("avx512f") said yes, so the library still runs on older CPUs.
//
// Register blocking (the kernel itself is core/cpu/gemm_kernel_simd.h): a 12 x 32 float tile
// is 12 rows x 2 zmm = 24 accumulators, plus 2 zmm of B and 1 broadcast of A = 27 of the 32
// zmm registers. Each k step issues 2 vector loads + 12 broadcast loads for 24 FMAs, so a
// core with two 512-bit FMA pipes (Sapphire Rapids: 2 FMAs and 2-3 loads per cycle) stays
// FMA-bound: 12 cycles of FMAs against 7 of loads. 24 independent chains cover the 4-cycle
// FMA latency twice over. 12 rows waste only 3 % of the MLP's batch of 128 (11 tiles).
//
// Blocking for 48 KiB L1d / 2 MiB L2 per core: an A panel (12 x kc = 12 x 256 floats =
// 12 KiB) stays in L1 while it meets every B panel of the slice; a B slice (kc x nc = 256 x
// 1024 floats = 1 MiB) stays in L2 while every A panel passes over it.
#include <immintrin.h>

#include <cstdint>

#include <ember/core/cpu/avx512_intrinsic_warnings.h>
#include <ember/core/cpu/gemm_kernel_simd.h>
#include <ember/core/cpu/gemm_kernels.h>
#include <ember/core/cpu/transpose16_avx512.h>

namespace ember::cpu {

namespace {

EMBER_AVX512_INTRINSICS_BEGIN  // core/cpu/avx512_intrinsic_warnings.h: also around the kernels' instantiations below

struct Zmm32 {
  using T = float;
  using V = __m512;
  static constexpr int kLanes = 16;
  static V zero() { return _mm512_setzero_ps(); }
  static V load(const T* p) { return _mm512_loadu_ps(p); }
  static void store(T* p, V v) { _mm512_storeu_ps(p, v); }
  static V load_partial(const T* p, int n) { return _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << n) - 1), p); }
  static void store_partial(T* p, V v, int n) { _mm512_mask_storeu_ps(p, static_cast<__mmask16>((1u << n) - 1), v); }
  static V broadcast(const T* p) { return _mm512_set1_ps(*p); }
  static V splat(T x) { return _mm512_set1_ps(x); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  // A last vector column at most half used runs at half width (gemm_kernel_simd.h, HALF_TAIL).
  // A ymm register is the low half of a zmm, so narrowing is free; widening zero-fills.
  static constexpr bool kHalfTail = true;
  using HalfV = __m256;
  static HalfV half_zero() { return _mm256_setzero_ps(); }
  static HalfV half_load(const T* p) { return _mm256_loadu_ps(p); }
  static HalfV half_load_partial(const T* p, int n) { return _mm256_maskz_loadu_ps(static_cast<__mmask8>((1u << n) - 1), p); }
  static HalfV half_broadcast(const T* p) { return _mm256_set1_ps(*p); }
  static HalfV lower_half(V v) { return _mm512_castps512_ps256(v); }
  static HalfV half_fma(HalfV a, HalfV b, HalfV c) { return _mm256_fmadd_ps(a, b, c); }
  static V widen(HalfV v) { return _mm512_zextps256_ps512(v); }
};
struct Zmm64 {
  using T = double;
  using V = __m512d;
  static constexpr int kLanes = 8;
  static V zero() { return _mm512_setzero_pd(); }
  static V load(const T* p) { return _mm512_loadu_pd(p); }
  static void store(T* p, V v) { _mm512_storeu_pd(p, v); }
  static V load_partial(const T* p, int n) { return _mm512_maskz_loadu_pd(static_cast<__mmask8>((1u << n) - 1), p); }
  static void store_partial(T* p, V v, int n) { _mm512_mask_storeu_pd(p, static_cast<__mmask8>((1u << n) - 1), v); }
  static V broadcast(const T* p) { return _mm512_set1_pd(*p); }
  static V splat(T x) { return _mm512_set1_pd(x); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_pd(a, b, c); }
  static V mul(V a, V b) { return _mm512_mul_pd(a, b); }
  static constexpr bool kHalfTail = true;  // as Zmm32's
  using HalfV = __m256d;
  static HalfV half_zero() { return _mm256_setzero_pd(); }
  static HalfV half_load(const T* p) { return _mm256_loadu_pd(p); }
  static HalfV half_load_partial(const T* p, int n) { return _mm256_maskz_loadu_pd(static_cast<__mmask8>((1u << n) - 1), p); }
  static HalfV half_broadcast(const T* p) { return _mm256_set1_pd(*p); }
  static HalfV lower_half(V v) { return _mm512_castpd512_pd256(v); }
  static HalfV half_fma(HalfV a, HalfV b, HalfV c) { return _mm256_fmadd_pd(a, b, c); }
  static V widen(HalfV v) { return _mm512_zextpd256_pd512(v); }
};

// out[p * W + i] = src[i * stride + p] for i < rows (zeros up to W), p < depth: a panel of
// W interleaved rows. 16 x 16 blocks are transposed in registers, so each element costs a
// fraction of a load, a shuffle and a store instead of a scalar load and store each.
template <int W>
void pack_transposed(const float* src, std::int64_t stride, std::int64_t rows, std::int64_t depth, float* out) {
  for (int group = 0; group < W; group += 16) {
    const int width = W - group < 16 ? W - group : 16;  // lanes of this group stored per k step
    const auto store_mask = static_cast<__mmask16>((1u << width) - 1);
    for (std::int64_t p0 = 0; p0 < depth; p0 += 16) {
      const int steps = depth - p0 < 16 ? static_cast<int>(depth - p0) : 16;
      const auto load_mask = static_cast<__mmask16>((1u << steps) - 1);
      __m512 r[16];
      for (int i = 0; i < 16; ++i) {
        const std::int64_t row = group + i;
        r[i] = (i < width && row < rows) ? _mm512_maskz_loadu_ps(load_mask, src + row * stride + p0)
                                         : _mm512_setzero_ps();
      }
      transpose16(r);
      float* dst = out + p0 * W + group;
      for (int q = 0; q < steps; ++q) _mm512_mask_storeu_ps(dst + q * W, store_mask, r[q]);
    }
  }
}

// out[p * W + i] = src[p * stride + i]: the values of a step are adjacent already, so each
// step is one or two masked vector copies; the zero-masked load writes the padding zeros.
template <class T, int W>
void pack_copied(const T* src, std::int64_t stride, std::int64_t rows, std::int64_t depth, T* out) {
  constexpr int kLanes = 64 / sizeof(T);
  for (std::int64_t p = 0; p < depth; ++p) {
    const T* from = src + p * stride;
    T* to = out + p * W;
#pragma GCC unroll 4
    for (int group = 0; group < W; group += kLanes) {
      const std::int64_t valid = rows - group < 0 ? 0 : (rows - group < kLanes ? rows - group : kLanes);
      const unsigned load_mask = (1u << valid) - 1, store_mask = (1u << (W - group < kLanes ? W - group : kLanes)) - 1;
      if constexpr (sizeof(T) == 4)
        _mm512_mask_storeu_ps(to + group, static_cast<__mmask16>(store_mask),
                              _mm512_maskz_loadu_ps(static_cast<__mmask16>(load_mask), from + group));
      else
        _mm512_mask_storeu_pd(to + group, static_cast<__mmask8>(store_mask),
                              _mm512_maskz_loadu_pd(static_cast<__mmask8>(load_mask), from + group));
    }
  }
}

// The PackFn the driver calls (see gemm_kernels.h): copies and float transposes in registers.
template <class T, int W>
bool pack_panel(const T* src, std::int64_t stride_i, std::int64_t stride_p, std::int64_t rows, std::int64_t depth,
                T* out) {
  if (stride_i == 1) {
    pack_copied<T, W>(src, stride_p, rows, depth, out);
    return true;
  }
  if constexpr (sizeof(T) == 4) {
    if (stride_p == 1) {
      pack_transposed<W>(src, stride_i, rows, depth, out);
      return true;
    }
  }
  return false;
}

}  // namespace

MicroKernel<float> avx512_kernel_f32() {
  MicroKernel<float> kernel = simd::make_kernel<Zmm32, 12, 2>("avx512", 256, 1024);  // 12 x 32
  kernel.pack_a = &pack_panel<float, 12>;
  kernel.pack_b = &pack_panel<float, 32>;
  return kernel;
}

// Doubles: the same 12 x 2 zmm tile (12 x 16 doubles) and the same bytes per panel.
MicroKernel<double> avx512_kernel_f64() {
  MicroKernel<double> kernel = simd::make_kernel<Zmm64, 12, 2>("avx512", 128, 1024);
  kernel.pack_a = &pack_panel<double, 12>;
  kernel.pack_b = &pack_panel<double, 16>;
  return kernel;
}

EMBER_AVX512_INTRINSICS_END

}  // namespace ember::cpu
