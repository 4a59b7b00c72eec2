// core/cpu/max_pool_2x2_avx512.cpp — performance code, safe to skip on a first read: MaxPool2d(2)
// (2x2 windows, stride 2, inside the plane) on float32 planes with AVX-512, sixteen outputs
// per step. core/cpu/pool_kernels.cpp's loops are the reading version and the fallback;
// they call this only when cpuid reported AVX-512 (active_gemm_kernel_name() == "avx512").
//
// Why a kernel of its own: a CNN's pooling planes are small (28 x 28 -> 14 x 14, 14 x 14 ->
// 7 x 7), so the compiler's vectorised loop spends its time in set-up and in the shuffles
// that split the two columns of each window, per window row. Here one output row of up to 16
// windows is: two masked loads per input row, one two-source permute per column parity
// (even columns: each window's left value, odd: its right), three compare-and-blends in the
// window order a b / c d, and the index arithmetic in int32 lanes, widened to int64 once.
// Same rule as the reading loop: the first maximum in row-major window order wins, and a
// NaN replaces the best so far (PyTorch's `value > best || isnan(value)`), so the same
// values and the same indices, bit for bit.
#include <immintrin.h>

#include <cstdint>

#include <ember/core/cpu/cpu_kernels.h>

namespace ember::cpu {

// GCC 12 reports its own _mm512_undefined_*() inside the masked-load and widening intrinsics
// as "used uninitialized" (a false positive: every lane is written); silence it here only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#ifndef __clang__  // a GCC-only warning
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

void max_pool_2x2_plane_avx512(const float* in, std::int64_t in_w, std::int64_t out_h, std::int64_t out_w,
                               float* out, std::int64_t* indices) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
  const __m512i row_step = _mm512_set1_epi32(static_cast<std::int32_t>(in_w));
  const __m512i one = _mm512_set1_epi32(1);
  for (std::int64_t y = 0; y < out_h; ++y) {
    const float* top = in + 2 * y * in_w;
    const float* bottom = top + in_w;
    const __m512i row_base = _mm512_set1_epi64(2 * y * in_w);
    for (std::int64_t x0 = 0; x0 < out_w; x0 += 16) {
      const int count = static_cast<int>(out_w - x0 < 16 ? out_w - x0 : 16);  // windows in this step
      const int values = 2 * count;                                          // floats per input row
      const __mmask16 low_mask = static_cast<__mmask16>(values >= 16 ? 0xFFFF : (1u << values) - 1);
      const __mmask16 high_mask = static_cast<__mmask16>(values <= 16 ? 0 : (1u << (values - 16)) - 1);
      const __m512 top_low = _mm512_maskz_loadu_ps(low_mask, top + 2 * x0);
      const __m512 top_high = _mm512_maskz_loadu_ps(high_mask, top + 2 * x0 + 16);
      const __m512 bottom_low = _mm512_maskz_loadu_ps(low_mask, bottom + 2 * x0);
      const __m512 bottom_high = _mm512_maskz_loadu_ps(high_mask, bottom + 2 * x0 + 16);
      // The window's four values, in the order they are compared: a b (top row), c d.
      const __m512 window[4] = {_mm512_permutex2var_ps(top_low, even, top_high),
                                _mm512_permutex2var_ps(top_low, odd, top_high),
                                _mm512_permutex2var_ps(bottom_low, even, bottom_high),
                                _mm512_permutex2var_ps(bottom_low, odd, bottom_high)};
      __m512 best = window[0];
      __m512i which = _mm512_setzero_si512();  // 0..3: the position of the best in the window
      for (int position = 1; position < 4; ++position) {
        const __m512 value = window[position];
        const __mmask16 take = _mm512_cmp_ps_mask(value, best, _CMP_GT_OQ) | _mm512_cmp_ps_mask(value, value, _CMP_UNORD_Q);
        best = _mm512_mask_mov_ps(best, take, value);
        which = _mm512_mask_mov_epi32(which, take, _mm512_set1_epi32(position));
      }
      const __mmask16 store_mask = static_cast<__mmask16>(count == 16 ? 0xFFFF : (1u << count) - 1);
      _mm512_mask_storeu_ps(out + y * out_w + x0, store_mask, best);
      // Index within the row pair: (which / 2) * in_w + 2 x + which % 2, in int32 (the
      // caller checked 3 * in_w fits), then plus the pair's first index in int64.
      const __m512i column = _mm512_add_epi32(_mm512_set1_epi32(static_cast<std::int32_t>(2 * x0)), even);
      const __m512i offset = _mm512_add_epi32(
          _mm512_add_epi32(_mm512_mullo_epi32(_mm512_srli_epi32(which, 1), row_step), _mm512_and_si512(which, one)),
          column);
      const __m512i first8 = _mm512_add_epi64(_mm512_cvtepi32_epi64(_mm512_castsi512_si256(offset)), row_base);
      const __m512i last8 = _mm512_add_epi64(_mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(offset, 1)), row_base);
      std::int64_t* index_row = indices + y * out_w + x0;
      _mm512_mask_storeu_epi64(index_row, static_cast<__mmask8>(store_mask & 0xFF), first8);
      _mm512_mask_storeu_epi64(index_row + 8, static_cast<__mmask8>(store_mask >> 8), last8);
    }
  }
}

#pragma GCC diagnostic pop

}  // namespace ember::cpu
