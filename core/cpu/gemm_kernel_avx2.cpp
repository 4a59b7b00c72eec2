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
  // No half-width tail (gemm_kernel_simd.h): AVX2 cores run a 128-bit FMA no faster than a 256-bit one.
  static constexpr bool kHalfTail = false;
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
  static constexpr bool kHalfTail = false;  // as Ymm32's
};

// Transposes 8 rows of 8 floats in registers: afterwards r[q] holds element q of every row.
// Pairs of rows unpacked, 64-bit halves shuffled, then 128-bit lanes swapped.
inline __attribute__((always_inline)) void transpose8(__m256 r[8]) {
  __m256 t[8], u[8];
  for (int k = 0; k < 4; ++k) {
    t[2 * k] = _mm256_unpacklo_ps(r[2 * k], r[2 * k + 1]);
    t[2 * k + 1] = _mm256_unpackhi_ps(r[2 * k], r[2 * k + 1]);
  }
  // Within each 128-bit lane L, u[4k + c] gets rows 4k..4k+3 of column 4L + c.
  for (int k = 0; k < 2; ++k) {
    u[4 * k] = _mm256_shuffle_ps(t[4 * k], t[4 * k + 2], _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * k + 1] = _mm256_shuffle_ps(t[4 * k], t[4 * k + 2], _MM_SHUFFLE(3, 2, 3, 2));
    u[4 * k + 2] = _mm256_shuffle_ps(t[4 * k + 1], t[4 * k + 3], _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * k + 3] = _mm256_shuffle_ps(t[4 * k + 1], t[4 * k + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int c = 0; c < 4; ++c) {
    r[c] = _mm256_permute2f128_ps(u[c], u[4 + c], 0x20);      // lane 0 of both: column c
    r[4 + c] = _mm256_permute2f128_ps(u[c], u[4 + c], 0x31);  // lane 1 of both: column 4 + c
  }
}

// The packs (gemm_kernels.h's PackFn; the portable loops of core/cpu/gemm_pack.h copied and
// transposed one float at a time, a tenth of the CNN's step on an AVX2 host). W = 6 (A) or 16 (B).
//
// Stores are whole vectors wherever they stay inside the panel: AMD's cores run a vmaskmov
// store several times slower than a plain one (docs/performance.md, "AVX2 without masked
// stores"). A 6-wide step stored as 8 lanes writes 2 lanes into the next step's slot, which
// that step's own store overwrites next (steps are written in order); only a panel's last
// step is masked.
template <int W>
void store_step(float* out, std::int64_t step, std::int64_t depth, int group, __m256 values) {
  constexpr int kWidth = W < 8 ? W : 8;
  if (W - group >= 8 || step + 1 < depth) _mm256_storeu_ps(out + step * W + group, values);
  else _mm256_maskstore_ps(out + step * W + group, first_lanes32(kWidth), values);
}

// out[p * W + i] = src[i * stride + p] for i < rows (zeros up to W), p < depth: 8 x 8 blocks
// transposed in registers.
template <int W>
void pack_transposed(const float* src, std::int64_t stride, std::int64_t rows, std::int64_t depth, float* out) {
  static_assert(W % 8 == 0 || W < 8, "a group is a whole vector or the panel's only one");
  // Steps in order within each group: a 6-wide step's spill is overwritten by the next one.
  for (int group = 0; group < W; group += 8) {
    for (std::int64_t p0 = 0; p0 < depth; p0 += 8) {
      const int steps = depth - p0 < 8 ? static_cast<int>(depth - p0) : 8;
      const __m256i load_mask = first_lanes32(steps);
      __m256 r[8];
      for (int i = 0; i < 8; ++i) {
        const std::int64_t row = group + i;
        r[i] = (group + i < W && row < rows) ? _mm256_maskload_ps(src + row * stride + p0, load_mask) : _mm256_setzero_ps();
      }
      transpose8(r);
      for (int q = 0; q < steps; ++q) store_step<W>(out, p0 + q, depth, group, r[q]);
    }
  }
}

// out[p * W + i] = src[p * stride + i]: each step's values are adjacent, one or two masked
// loads (the masked-off lanes read nothing and give the padding zeros) and whole stores.
template <int W>
void pack_copied(const float* src, std::int64_t stride, std::int64_t rows, std::int64_t depth, float* out) {
  for (std::int64_t p = 0; p < depth; ++p) {
    for (int group = 0; group < W; group += 8) {
      const std::int64_t valid = rows - group < 0 ? 0 : (rows - group < 8 ? rows - group : 8);
      store_step<W>(out, p, depth, group, _mm256_maskload_ps(src + p * stride + group, first_lanes32(static_cast<int>(valid))));
    }
  }
}

template <int W>
bool pack_panel(const float* src, std::int64_t stride_i, std::int64_t stride_p, std::int64_t rows, std::int64_t depth,
                float* out) {
  if (stride_i == 1) {
    pack_copied<W>(src, stride_p, rows, depth, out);
    return true;
  }
  if (stride_p == 1) {
    pack_transposed<W>(src, stride_i, rows, depth, out);
    return true;
  }
  return false;
}

}  // namespace

// kc x NR of B = 256 x 16 floats = 16 KiB per panel; a 6 x 256 A panel = 6 KiB in L1.
MicroKernel<float> avx2_kernel_f32() {
  MicroKernel<float> kernel = simd::make_kernel<Ymm32, 6, 2>("avx2", 256, 1024);
  kernel.pack_a = &pack_panel<6>;
  kernel.pack_b = &pack_panel<16>;
  return kernel;
}
// Doubles: 6 x 8, the same bytes per panel row.
MicroKernel<double> avx2_kernel_f64() { return simd::make_kernel<Ymm64, 6, 2>("avx2", 256, 512); }

}  // namespace ember::cpu
