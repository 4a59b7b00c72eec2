// core/cpu/max_pool_2x2_avx512.cpp — performance code, safe to skip on a first read: MaxPool2d(2)
// (2x2 windows, stride 2, inside the plane) on float32 and bfloat16 planes with AVX-512
// (F and VL; the bfloat16 backward BW too), sixteen windows per step, forward and backward. core/cpu/pool_kernels.cpp's
// loops are the reading version and the fallback; they call this only when cpuid reported
// AVX-512 (active_gemm_kernel_name() == "avx512").
//
// Why a kernel of its own: a CNN's pooling planes are small (28 x 28 -> 14 x 14, 14 x 14 ->
// 7 x 7), so the compiler's vectorised loop spends its time in set-up and in the shuffles
// that split the two columns of each window, per window row. Here one output row of up to 16
// windows is: two masked loads per input row, one two-source permute per column parity
// (even columns: each window's left value, odd: its right), three compare-and-blends in the
// window order a b / c d, and the index arithmetic in int32 lanes, widened to int64 once.
// Same rule as the reading loop: the first maximum in row-major window order wins, and a
// NaN replaces the best so far (PyTorch's `value > best || isnan(value)`), so the same
// values and the same indices, bit for bit. A bfloat16 plane is pooled as it is read (its
// values widened in registers) instead of widened into a float plane and narrowed back, and
// the backward writes every input element once (the gradient or a zero per window position)
// instead of zeroing the plane and scattering through the int64 indices one at a time.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include <ember/core/cpu/avx512_intrinsic_warnings.h>
#include <ember/core/cpu/cpu_kernels.h>

namespace ember::cpu {

EMBER_AVX512_INTRINSICS_BEGIN  // core/cpu/avx512_intrinsic_warnings.h

namespace {

// Lanes 0, 2, ..., 30 (a function, not a global: a global's initialiser would run AVX-512
// code when the library loads, on any CPU).
__m512i even_lanes() { return _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30); }

// Masks for a step of `count` windows (1..16): the windows, and a window row's 2 * count
// floats in two registers of 16.
struct StepMasks {
  __mmask16 windows, low, high;
};
StepMasks step_masks(std::int64_t count) {
  const auto values = static_cast<int>(2 * count);
  return {static_cast<__mmask16>(count == 16 ? 0xFFFF : (1u << count) - 1),
          static_cast<__mmask16>(values >= 16 ? 0xFFFF : (1u << values) - 1),
          static_cast<__mmask16>(values <= 16 ? 0 : (1u << (values - 16)) - 1)};
}

// The best of each lane's window a b / c d (window[0..3]) and its position 0..3: the first
// maximum in that order wins, and a NaN replaces the best so far.
__m512 best_of_windows(const __m512 (&window)[4], __m512i& which) {
  __m512 best = window[0];
  which = _mm512_setzero_si512();
  for (int position = 1; position < 4; ++position) {
    const __m512 value = window[position];
    const __mmask16 take = _mm512_cmp_ps_mask(value, best, _CMP_GT_OQ) | _mm512_cmp_ps_mask(value, value, _CMP_UNORD_Q);
    best = _mm512_mask_mov_ps(best, take, value);
    which = _mm512_mask_mov_epi32(which, take, _mm512_set1_epi32(position));
  }
  return best;
}

// The plane index of each window's best: (which / 2) * in_w + 2 x + which % 2 in int32 (the
// caller checked 3 * in_w fits), plus the row pair's first index in int64.
void store_indices(__m512i which, std::int64_t y, std::int64_t x0, std::int64_t in_w, __mmask16 windows,
                   std::int64_t* index_row) {
  const __m512i column = _mm512_add_epi32(_mm512_set1_epi32(static_cast<std::int32_t>(2 * x0)), even_lanes());
  const __m512i offset = _mm512_add_epi32(
      _mm512_add_epi32(_mm512_mullo_epi32(_mm512_srli_epi32(which, 1), _mm512_set1_epi32(static_cast<std::int32_t>(in_w))),
                       _mm512_and_si512(which, _mm512_set1_epi32(1))),
      column);
  const __m512i row_base = _mm512_set1_epi64(2 * y * in_w);
  const __m512i first8 = _mm512_add_epi64(_mm512_cvtepi32_epi64(_mm512_castsi512_si256(offset)), row_base);
  const __m512i last8 = _mm512_add_epi64(_mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(offset, 1)), row_base);
  _mm512_mask_storeu_epi64(index_row, static_cast<__mmask8>(windows & 0xFF), first8);
  _mm512_mask_storeu_epi64(index_row + 8, static_cast<__mmask8>(windows >> 8), last8);
}

// bfloat16 bits of float lanes holding bfloat16 values (exact: each is a bfloat16 widened),
// NaN as 0x7FC0, as every bfloat16 rounding in ember.
__m512i bfloat16_bits(__m512 values) {
  const __m512i bits = _mm512_srli_epi32(_mm512_castps_si512(values), 16);
  return _mm512_mask_mov_epi32(bits, _mm512_cmp_ps_mask(values, values, _CMP_UNORD_Q), _mm512_set1_epi32(0x7FC0));
}

// The lanes of `windows` widened from bfloat16 to float, the others +0.0: a masked 16-bit
// load, so AVX-512 BW (its callers are compiled for it; pool_kernels.cpp checks cpuid).
__attribute__((target("avx512bw"))) __m512 widen_bfloat16(const std::uint16_t* values, __mmask16 windows) {
  const __m512i wide = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(windows, values));
  return _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16));
}

}  // namespace

void max_pool_2x2_plane_avx512(const float* in, std::int64_t in_w, std::int64_t out_h, std::int64_t out_w,
                               float* out, std::int64_t* indices) {
  const __m512i even = even_lanes();
  const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
  for (std::int64_t y = 0; y < out_h; ++y) {
    const float* top = in + 2 * y * in_w;
    const float* bottom = top + in_w;
    for (std::int64_t x0 = 0; x0 < out_w; x0 += 16) {
      const StepMasks m = step_masks(std::min<std::int64_t>(16, out_w - x0));
      const __m512 top_low = _mm512_maskz_loadu_ps(m.low, top + 2 * x0);
      const __m512 top_high = _mm512_maskz_loadu_ps(m.high, top + 2 * x0 + 16);
      const __m512 bottom_low = _mm512_maskz_loadu_ps(m.low, bottom + 2 * x0);
      const __m512 bottom_high = _mm512_maskz_loadu_ps(m.high, bottom + 2 * x0 + 16);
      // The window's four values, in the order they are compared: a b (top row), c d.
      const __m512 window[4] = {_mm512_permutex2var_ps(top_low, even, top_high),
                                _mm512_permutex2var_ps(top_low, odd, top_high),
                                _mm512_permutex2var_ps(bottom_low, even, bottom_high),
                                _mm512_permutex2var_ps(bottom_low, odd, bottom_high)};
      __m512i which;
      const __m512 best = best_of_windows(window, which);
      _mm512_mask_storeu_ps(out + y * out_w + x0, m.windows, best);
      store_indices(which, y, x0, in_w, m.windows, indices + y * out_w + x0);
    }
  }
}

// bfloat16: a 32-bit word of a window row holds the window's two values (left in the low
// half), so one masked word load gives both columns of 16 windows without a permute, and a
// shift or a mask widens them exactly.
void max_pool_2x2_plane_avx512(const std::uint16_t* in, std::int64_t in_w, std::int64_t out_h, std::int64_t out_w,
                               std::uint16_t* out, std::int64_t* indices) {
  const __m512i high_half = _mm512_set1_epi32(static_cast<std::int32_t>(0xFFFF0000u));
  const auto left = [](__m512i words) { return _mm512_castsi512_ps(_mm512_slli_epi32(words, 16)); };
  const auto right = [&](__m512i words) { return _mm512_castsi512_ps(_mm512_and_si512(words, high_half)); };
  for (std::int64_t y = 0; y < out_h; ++y) {
    const std::uint16_t* top = in + 2 * y * in_w;
    const std::uint16_t* bottom = top + in_w;
    for (std::int64_t x0 = 0; x0 < out_w; x0 += 16) {
      const StepMasks m = step_masks(std::min<std::int64_t>(16, out_w - x0));
      const __m512i top_words = _mm512_maskz_loadu_epi32(m.windows, top + 2 * x0);
      const __m512i bottom_words = _mm512_maskz_loadu_epi32(m.windows, bottom + 2 * x0);
      const __m512 window[4] = {left(top_words), right(top_words), left(bottom_words), right(bottom_words)};
      __m512i which;
      const __m512 best = best_of_windows(window, which);
      _mm512_mask_cvtepi32_storeu_epi16(out + y * out_w + x0, m.windows, bfloat16_bits(best));
      store_indices(which, y, x0, in_w, m.windows, indices + y * out_w + x0);
    }
  }
}

// The backward, written densely: each window's four inputs get +0.0 + g at the position its
// index names and +0.0 at the other three (what zeroing the plane and adding g at the index
// gives, since the windows are disjoint), then the rows and columns no window covers get zeros.
// An index that is not one of its window's four positions (not from this forward) stops it:
// false, and the caller scatters that plane instead.
namespace {

// Positions 0..3 of the window (top left, top right, bottom left, bottom right) that each
// lane's index names, as four lane masks; false if some window's index is none of them.
// The offsets from each window's top-left index are checked to lie in [0, in_w + 1] in int64
// (unsigned: a negative one is huge) before they are narrowed to int32 lanes.
inline __attribute__((always_inline)) bool index_positions(const std::int64_t* index_row, std::int64_t y,
                                                           std::int64_t x0, std::int64_t in_w, __mmask16 windows,
                                                           __mmask16 (&at)[4]) {
  const __m512i top_left = _mm512_add_epi64(_mm512_set1_epi64(2 * y * in_w + 2 * x0),
                                            _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14));
  const auto low = static_cast<__mmask8>(windows & 0xFF), high = static_cast<__mmask8>(windows >> 8);
  const __m512i offset_low = _mm512_sub_epi64(_mm512_maskz_loadu_epi64(low, index_row), top_left);
  const __m512i offset_high = _mm512_sub_epi64(_mm512_maskz_loadu_epi64(high, index_row + 8),
                                               _mm512_add_epi64(top_left, _mm512_set1_epi64(16)));
  const __m512i span = _mm512_set1_epi64(in_w + 1);
  const __mmask8 inside_low = _mm512_mask_cmple_epu64_mask(low, offset_low, span);
  const __mmask8 inside_high = _mm512_mask_cmple_epu64_mask(high, offset_high, span);
  if (inside_low != low || inside_high != high) return false;
  const __m512i offset = _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtepi64_epi32(offset_low)),
                                            _mm512_cvtepi64_epi32(offset_high), 1);
  const auto in_w32 = static_cast<std::int32_t>(in_w);
  at[0] = _mm512_mask_cmpeq_epi32_mask(windows, offset, _mm512_setzero_si512());
  at[1] = _mm512_mask_cmpeq_epi32_mask(windows, offset, _mm512_set1_epi32(1));
  at[2] = _mm512_mask_cmpeq_epi32_mask(windows, offset, _mm512_set1_epi32(in_w32));
  at[3] = _mm512_mask_cmpeq_epi32_mask(windows, offset, _mm512_set1_epi32(in_w32 + 1));
  return static_cast<__mmask16>(at[0] | at[1] | at[2] | at[3]) == windows;
}

// Zeros where no window reaches: columns [2 out_w, in_w) of the covered rows, rows [2 out_h, in_h).
template <class T>
void zero_uncovered(T* grad_in, std::int64_t in_h, std::int64_t in_w, std::int64_t out_h, std::int64_t out_w) {
  for (std::int64_t h = 0; h < 2 * out_h; ++h) std::fill(grad_in + h * in_w + 2 * out_w, grad_in + (h + 1) * in_w, T(0));
  std::fill(grad_in + 2 * out_h * in_w, grad_in + in_h * in_w, T(0));
}

}  // namespace

bool max_pool_2x2_backward_plane_avx512(const float* grad_out, const std::int64_t* indices, std::int64_t in_h,
                                        std::int64_t in_w, std::int64_t out_h, std::int64_t out_w, float* grad_in) {
  const __m512i interleave_low = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i interleave_high = _mm512_add_epi32(interleave_low, _mm512_set1_epi32(8));
  for (std::int64_t y = 0; y < out_h; ++y) {
    float* top = grad_in + 2 * y * in_w;
    float* bottom = top + in_w;
    for (std::int64_t x0 = 0; x0 < out_w; x0 += 16) {
      const StepMasks m = step_masks(std::min<std::int64_t>(16, out_w - x0));
      __mmask16 at[4];
      if (!index_positions(indices + y * out_w + x0, y, x0, in_w, m.windows, at)) return false;
      const __m512 g = _mm512_add_ps(_mm512_setzero_ps(), _mm512_maskz_loadu_ps(m.windows, grad_out + y * out_w + x0));
      const __m512 a = _mm512_maskz_mov_ps(at[0], g), b = _mm512_maskz_mov_ps(at[1], g);
      const __m512 c = _mm512_maskz_mov_ps(at[2], g), d = _mm512_maskz_mov_ps(at[3], g);
      _mm512_mask_storeu_ps(top + 2 * x0, m.low, _mm512_permutex2var_ps(a, interleave_low, b));
      _mm512_mask_storeu_ps(top + 2 * x0 + 16, m.high, _mm512_permutex2var_ps(a, interleave_high, b));
      _mm512_mask_storeu_ps(bottom + 2 * x0, m.low, _mm512_permutex2var_ps(c, interleave_low, d));
      _mm512_mask_storeu_ps(bottom + 2 * x0 + 16, m.high, _mm512_permutex2var_ps(c, interleave_high, d));
    }
  }
  zero_uncovered(grad_in, in_h, in_w, out_h, out_w);
  return true;
}

// bfloat16: g widened, +0.0 added in float and narrowed (exact but for -0.0 -> +0.0 and NaN ->
// 0x7FC0: the float32 path's bits); a window row's two values are one 32-bit word.
__attribute__((target("avx512bw"))) bool max_pool_2x2_backward_plane_avx512(
    const std::uint16_t* grad_out, const std::int64_t* indices, std::int64_t in_h, std::int64_t in_w,
    std::int64_t out_h, std::int64_t out_w, std::uint16_t* grad_in) {
  for (std::int64_t y = 0; y < out_h; ++y) {
    std::uint16_t* top = grad_in + 2 * y * in_w;
    std::uint16_t* bottom = top + in_w;
    for (std::int64_t x0 = 0; x0 < out_w; x0 += 16) {
      const StepMasks m = step_masks(std::min<std::int64_t>(16, out_w - x0));
      __mmask16 at[4];
      if (!index_positions(indices + y * out_w + x0, y, x0, in_w, m.windows, at)) return false;
      const __m512i g = bfloat16_bits(_mm512_add_ps(_mm512_setzero_ps(), widen_bfloat16(grad_out + y * out_w + x0, m.windows)));
      const auto words = [&](__mmask16 left, __mmask16 right) {  // (left value, right value) per window
        return _mm512_or_si512(_mm512_maskz_mov_epi32(left, g), _mm512_slli_epi32(_mm512_maskz_mov_epi32(right, g), 16));
      };
      _mm512_mask_storeu_epi32(top + 2 * x0, m.windows, words(at[0], at[1]));
      _mm512_mask_storeu_epi32(bottom + 2 * x0, m.windows, words(at[2], at[3]));
    }
  }
  zero_uncovered(grad_in, in_h, in_w, out_h, out_w);
  return true;
}

EMBER_AVX512_INTRINSICS_END

}  // namespace ember::cpu
