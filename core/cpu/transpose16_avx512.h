// core/cpu/transpose16_avx512.h — performance code: a 16 x 16 transpose of 32-bit values in
// AVX-512 registers, for the packing loops that turn rows into interleaved columns (the float32
// GEMM's transposed panels, core/cpu/gemm_kernel_avx512.cpp; the bfloat16 convolution's
// transposed cols panels, core/cpu/gemm_bf16_panels_avx512.cpp, as 16 words of bfloat16 pairs).
// Included only by files compiled with AVX-512.
#pragma once

#include <immintrin.h>

#include <ember/core/cpu/avx512_intrinsic_warnings.h>

namespace ember::cpu {

EMBER_AVX512_INTRINSICS_BEGIN  // core/cpu/avx512_intrinsic_warnings.h

// Transposes 16 rows of 16 floats in registers: afterwards r[q] holds element q of every row.
// Four rounds of two-source shuffles: 32-bit pairs, 64-bit pairs, then 128-bit lanes twice.
inline __attribute__((always_inline)) void transpose16(__m512 r[16]) {
  __m512 t[16], u[16];
  for (int k = 0; k < 8; ++k) {
    t[2 * k] = _mm512_unpacklo_ps(r[2 * k], r[2 * k + 1]);
    t[2 * k + 1] = _mm512_unpackhi_ps(r[2 * k], r[2 * k + 1]);
  }
  // Within each 128-bit lane L, u[4k + c] now gets rows 4k..4k+3 of column 4L + c.
  for (int k = 0; k < 4; ++k) {
    const __m512d t0 = _mm512_castps_pd(t[4 * k]), t1 = _mm512_castps_pd(t[4 * k + 1]);
    const __m512d t2 = _mm512_castps_pd(t[4 * k + 2]), t3 = _mm512_castps_pd(t[4 * k + 3]);
    u[4 * k] = _mm512_castpd_ps(_mm512_unpacklo_pd(t0, t2));
    u[4 * k + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(t0, t2));
    u[4 * k + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(t1, t3));
    u[4 * k + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(t1, t3));
  }
  // Gather lane L of u[c], u[4 + c], u[8 + c], u[12 + c] into r[4L + c].
  for (int c = 0; c < 4; ++c) {
    const __m512 v0 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0x88), v1 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0xDD);
    const __m512 w0 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0x88);
    const __m512 w1 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0xDD);
    r[c] = _mm512_shuffle_f32x4(v0, w0, 0x88);
    r[8 + c] = _mm512_shuffle_f32x4(v0, w0, 0xDD);
    r[4 + c] = _mm512_shuffle_f32x4(v1, w1, 0x88);
    r[12 + c] = _mm512_shuffle_f32x4(v1, w1, 0xDD);
  }
}

// The same for 16 rows of 16 32-bit words (the bits are only moved).
inline __attribute__((always_inline)) void transpose16(__m512i r[16]) {
  __m512 values[16];
  for (int i = 0; i < 16; ++i) values[i] = _mm512_castsi512_ps(r[i]);
  transpose16(values);
  for (int i = 0; i < 16; ++i) r[i] = _mm512_castps_si512(values[i]);
}

EMBER_AVX512_INTRINSICS_END

}  // namespace ember::cpu
