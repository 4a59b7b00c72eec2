// core/cpu/max_pool_2x2_avx2.cpp — performance code, safe to skip on a first read: MaxPool2d(2)
// (2x2 windows, stride 2, inside the plane) on float32 planes with AVX2, eight windows per
// step, forward and backward: core/cpu/max_pool_2x2_avx512.cpp for CPUs without AVX-512 (the
// reading loops of core/cpu/pool_kernels.cpp were 8 % of the CNN's step on an AVX2 host).
// pool_kernels.cpp calls these when the GEMM runs its AVX2 kernel (cpuid said AVX2 and FMA).
//
// The same algorithm as the AVX-512 file, in 8-lane registers: a window row's 16 floats are
// two loads, split into left and right columns by a shuffle and a 64-bit permute; three
// compare-and-blends in window order a b / c d (the first maximum wins, a NaN replaces the
// best so far); the index in int32 lanes, widened to int64. The backward writes every input
// element once: g where the window's index points, +0.0 at its other three places and where
// no window reaches. The same bits as the reading loops (tests/nn/test_conv_pool.cpp).
//
// Loads and stores are whole vectors wherever they stay inside the plane: AMD's cores run a
// vmaskmov store several times slower than a plain one, and the masked loads held the forward
// well below the AVX-512 kernel's speed (docs/performance.md, "AVX2 without masked stores").
// A row's last step of fewer than eight windows then reads lanes it discards and writes past
// the row's end, into places that a later store of this call writes again (the next rows'
// windows; the backward's zero fill of the columns and rows no window reaches), so the
// backward runs each row pair's steps last to first. Only an access that would leave the
// plane is masked. (Bounds are compared as offsets: a pointer past the buffer's end is not
// even formed.)
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include <ember/core/cpu/cpu_kernels.h>

namespace ember::cpu {

namespace {

// Lane i all ones when i < n (n may be <= 0 or >= 8).
__m256i first_lanes(std::int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(std::clamp<std::int64_t>(n, 0, 8))),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
__m256i first_lanes64(std::int64_t n) {
  return _mm256_cmpgt_epi64(_mm256_set1_epi64x(std::clamp<std::int64_t>(n, 0, 4)), _mm256_setr_epi64x(0, 1, 2, 3));
}

// Columns 0, 2, ..., 14 (left) or 1, 3, ..., 15 (right) of a window row's two registers.
__m256 left_columns(__m256 low, __m256 high) {
  const __m256 mixed = _mm256_shuffle_ps(low, high, _MM_SHUFFLE(2, 0, 2, 0));  // l0 l2 h0 h2 | l4 l6 h4 h6
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(mixed), _MM_SHUFFLE(3, 1, 2, 0)));
}
__m256 right_columns(__m256 low, __m256 high) {
  const __m256 mixed = _mm256_shuffle_ps(low, high, _MM_SHUFFLE(3, 1, 3, 1));
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(mixed), _MM_SHUFFLE(3, 1, 2, 0)));
}

}  // namespace

void max_pool_2x2_plane_avx2(const float* in, std::int64_t in_w, std::int64_t out_h, std::int64_t out_w, float* out,
                             std::int64_t* indices) {
  const __m256i even = _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14);
  const std::int64_t rows_end = 2 * out_h * in_w;  // the rows the windows cover
  for (std::int64_t y = 0; y < out_h; ++y) {
    const float* top = in + 2 * y * in_w;
    const float* bottom = top + in_w;
    for (std::int64_t x0 = 0; x0 < out_w; x0 += 8) {
      const std::int64_t count = std::min<std::int64_t>(8, out_w - x0);  // windows in this step
      // Whole loads where the 16 floats stay inside the rows the windows cover: lanes past the
      // row are computed, never kept.
      const bool whole_loads = (2 * y + 1) * in_w + 2 * x0 + 16 <= rows_end;
      const auto load = [whole_loads](const float* from, std::int64_t lanes) {
        return whole_loads ? _mm256_loadu_ps(from) : _mm256_maskload_ps(from, first_lanes(lanes));
      };
      const __m256 top_low = load(top + 2 * x0, 2 * count), top_high = load(top + 2 * x0 + 8, 2 * count - 8);
      const __m256 bottom_low = load(bottom + 2 * x0, 2 * count);
      const __m256 bottom_high = load(bottom + 2 * x0 + 8, 2 * count - 8);
      const __m256 window[4] = {left_columns(top_low, top_high), right_columns(top_low, top_high),
                                left_columns(bottom_low, bottom_high), right_columns(bottom_low, bottom_high)};
      __m256 best = window[0];
      __m256i which = _mm256_setzero_si256();  // 0..3: the position of the best in the window
      for (int position = 1; position < 4; ++position) {
        const __m256 value = window[position];
        const __m256 take = _mm256_or_ps(_mm256_cmp_ps(value, best, _CMP_GT_OQ), _mm256_cmp_ps(value, value, _CMP_UNORD_Q));
        best = _mm256_blendv_ps(best, value, take);
        which = _mm256_castps_si256(
            _mm256_blendv_ps(_mm256_castsi256_ps(which), _mm256_castsi256_ps(_mm256_set1_epi32(position)), take));
      }
      // Whole stores unless they would leave the plane (the spill of a short step lands on
      // the next rows, which their own steps write after this one).
      const bool whole = (y * out_w + x0 + 8) <= out_h * out_w;
      if (whole) _mm256_storeu_ps(out + y * out_w + x0, best);
      else _mm256_maskstore_ps(out + y * out_w + x0, first_lanes(count), best);
      // Index within the row pair: (which / 2) * in_w + 2 x + which % 2, in int32 (the
      // caller checked 3 * in_w fits), then plus the pair's first index in int64.
      const __m256i offset = _mm256_add_epi32(
          _mm256_add_epi32(_mm256_mullo_epi32(_mm256_srli_epi32(which, 1), _mm256_set1_epi32(static_cast<int>(in_w))),
                           _mm256_and_si256(which, _mm256_set1_epi32(1))),
          _mm256_add_epi32(_mm256_set1_epi32(static_cast<int>(2 * x0)), even));
      const __m256i row_base = _mm256_set1_epi64x(2 * y * in_w);
      auto* index_row = reinterpret_cast<long long*>(indices + y * out_w + x0);  // NOLINT: int64
      const __m256i first_four = _mm256_add_epi64(_mm256_cvtepi32_epi64(_mm256_castsi256_si128(offset)), row_base);
      const __m256i last_four = _mm256_add_epi64(_mm256_cvtepi32_epi64(_mm256_extracti128_si256(offset, 1)), row_base);
      if (whole) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(index_row), first_four);  // NOLINT: an unaligned vector store
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(index_row + 4), last_four);  // NOLINT
      } else {
        _mm256_maskstore_epi64(index_row, first_lanes64(count), first_four);
        _mm256_maskstore_epi64(index_row + 4, first_lanes64(count - 4), last_four);
      }
    }
  }
}

bool max_pool_2x2_backward_plane_avx2(const float* grad_out, const std::int64_t* indices, std::int64_t in_h,
                                      std::int64_t in_w, std::int64_t out_h, std::int64_t out_w, float* grad_in) {
  const __m256i low_words = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);  // an int64 lane's low half first
  const std::int64_t plane_end = in_h * in_w;
  for (std::int64_t y = 0; y < out_h; ++y) {
    float* top = grad_in + 2 * y * in_w;
    float* bottom = top + in_w;
    // Last step first: a short last step's whole stores spill into the row below (and the
    // bottom row's into the next pair), which the steps before it and the next pair then write.
    for (std::int64_t x0 = (out_w - 1) / 8 * 8; x0 >= 0; x0 -= 8) {
      const std::int64_t count = std::min<std::int64_t>(8, out_w - x0);
      const __m256i windows = first_lanes(count);
      // index - (the window's top-left index): 0, 1, in_w or in_w + 1, checked in int64
      // (0 <= offset <= in_w + 1) before it is narrowed to int32 lanes.
      const __m256i top_left = _mm256_add_epi64(_mm256_set1_epi64x(2 * y * in_w + 2 * x0), _mm256_setr_epi64x(0, 2, 4, 6));
      const auto* index_row = reinterpret_cast<const long long*>(indices + y * out_w + x0);  // NOLINT: int64
      // Whole loads inside the plane: lanes past `count` are masked out of every test and store.
      const bool whole = y * out_w + x0 + 8 <= out_h * out_w;
      const __m256i index_low = whole ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(index_row))  // NOLINT
                                      : _mm256_maskload_epi64(index_row, first_lanes64(count));
      const __m256i index_high = whole ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(index_row + 4))  // NOLINT
                                       : _mm256_maskload_epi64(index_row + 4, first_lanes64(count - 4));
      const __m256i offset_low = _mm256_sub_epi64(index_low, top_left);
      const __m256i offset_high = _mm256_sub_epi64(index_high,
                                                   _mm256_add_epi64(top_left, _mm256_set1_epi64x(8)));
      const __m256i span = _mm256_set1_epi64x(in_w + 2), minus_one = _mm256_set1_epi64x(-1);
      const __m256i inside_low = _mm256_and_si256(_mm256_cmpgt_epi64(offset_low, minus_one), _mm256_cmpgt_epi64(span, offset_low));
      const __m256i inside_high = _mm256_and_si256(_mm256_cmpgt_epi64(offset_high, minus_one), _mm256_cmpgt_epi64(span, offset_high));
      const int wanted_low = _mm256_movemask_pd(_mm256_castsi256_pd(first_lanes64(count)));
      const int wanted_high = _mm256_movemask_pd(_mm256_castsi256_pd(first_lanes64(count - 4)));
      if ((_mm256_movemask_pd(_mm256_castsi256_pd(inside_low)) & wanted_low) != wanted_low ||
          (_mm256_movemask_pd(_mm256_castsi256_pd(inside_high)) & wanted_high) != wanted_high)
        return false;
      const __m256i offset = _mm256_permute2x128_si256(_mm256_permutevar8x32_epi32(offset_low, low_words),
                                                       _mm256_permutevar8x32_epi32(offset_high, low_words), 0x20);
      const auto in_w32 = static_cast<int>(in_w);
      const __m256i at[4] = {_mm256_and_si256(windows, _mm256_cmpeq_epi32(offset, _mm256_setzero_si256())),
                             _mm256_and_si256(windows, _mm256_cmpeq_epi32(offset, _mm256_set1_epi32(1))),
                             _mm256_and_si256(windows, _mm256_cmpeq_epi32(offset, _mm256_set1_epi32(in_w32))),
                             _mm256_and_si256(windows, _mm256_cmpeq_epi32(offset, _mm256_set1_epi32(in_w32 + 1)))};
      const __m256i found = _mm256_or_si256(_mm256_or_si256(at[0], at[1]), _mm256_or_si256(at[2], at[3]));
      if (_mm256_movemask_ps(_mm256_castsi256_ps(found)) != _mm256_movemask_ps(_mm256_castsi256_ps(windows))) return false;
      const __m256 g = _mm256_add_ps(_mm256_setzero_ps(), whole ? _mm256_loadu_ps(grad_out + y * out_w + x0)
                                                                : _mm256_maskload_ps(grad_out + y * out_w + x0, windows));
      const auto pick = [&](int position) { return _mm256_and_ps(_mm256_castsi256_ps(at[position]), g); };
      const __m256i low_mask = first_lanes(2 * count), high_mask = first_lanes(2 * count - 8);
      const auto store_row = [&](float* row, __m256 left, __m256 right) {  // left0 right0 left1 right1 ...
        const __m256 first = _mm256_unpacklo_ps(left, right), second = _mm256_unpackhi_ps(left, right);
        const __m256 low = _mm256_permute2f128_ps(first, second, 0x20), high = _mm256_permute2f128_ps(first, second, 0x31);
        if ((row - grad_in) + 2 * x0 + 16 <= plane_end) {
          _mm256_storeu_ps(row + 2 * x0, low);
          _mm256_storeu_ps(row + 2 * x0 + 8, high);
        } else {
          _mm256_maskstore_ps(row + 2 * x0, low_mask, low);
          _mm256_maskstore_ps(row + 2 * x0 + 8, high_mask, high);
        }
      };
      store_row(top, pick(0), pick(1));
      store_row(bottom, pick(2), pick(3));
    }
  }
  for (std::int64_t h = 0; h < 2 * out_h; ++h) std::fill(grad_in + h * in_w + 2 * out_w, grad_in + (h + 1) * in_w, 0.0f);
  std::fill(grad_in + 2 * out_h * in_w, grad_in + in_h * in_w, 0.0f);
  return true;
}

}  // namespace ember::cpu
