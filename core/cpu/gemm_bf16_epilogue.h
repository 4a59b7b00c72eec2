// core/cpu/gemm_bf16_epilogue.h — performance code: the end of the bfloat16 GEMM, where the
// float32 sums become C: C = alpha · sums + beta · C, rounded once to bfloat16 (or kept in
// float32). Shared by the vdpbf16ps tiles (core/cpu/gemm_kernel_bf16_avx512.cpp) and the AMX
// blocks (core/cpu/gemm_bf16_amx.cpp, which runs a block's epilogue between the next block's
// tile products); included only by those two files, both built with AVX512-BF16.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include <ember/core/cpu/avx512_intrinsic_warnings.h>
#include <ember/core/cpu/gemm_bf16_layout.h>

namespace ember::cpu::bf16_epilogue {

EMBER_AVX512_INTRINSICS_BEGIN  // core/cpu/avx512_intrinsic_warnings.h

// float32 -> bfloat16 bits, rounding to nearest even and every NaN to 0x7FC0: exactly
// core/reduced_float.h's bfloat16_bits_from_float, so this path rounds as every other bfloat16
// result in ember. vcvtne2ps2bf16 rounds to nearest even in one instruction, but takes subnormal
// inputs as zero and keeps a NaN's sign and payload. A float32 that is neither rounds to the
// same bits either way (bfloat16 has float32's exponent range: a normal value never rounds to a
// subnormal one), and its result is a normal number or inf. So the instruction runs, and only
// where a result is something else (zero, subnormal or NaN: a zero may have been a subnormal)
// are the lanes rounded again with integer operations.
inline __m256i round_to_bfloat16_exactly(__m512 value) {
  const __m512i bits = _mm512_castps_si512(value);
  const __m512i lowest_kept = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
  const __m512i bias = _mm512_add_epi32(lowest_kept, _mm512_set1_epi32(0x7FFF));
  __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(bits, bias), 16);
  const __mmask16 nan = _mm512_cmp_ps_mask(value, value, _CMP_UNORD_Q);
  rounded = _mm512_mask_blend_epi32(nan, rounded, _mm512_set1_epi32(0x7FC0));
  return _mm512_cvtepi32_epi16(rounded);
}

// Whether every bfloat16 word is a normal number or inf: with the sign shifted out, the bits
// lie in [0x0100, 0xFF00] (exponent 1-254, or 255 with a zero mantissa).
inline bool all_normal_or_inf(__m512i words) {
  const __m512i from_smallest = _mm512_sub_epi16(_mm512_slli_epi16(words, 1), _mm512_set1_epi16(0x0100));
  return _mm512_cmp_epu16_mask(from_smallest, _mm512_set1_epi16(static_cast<short>(0xFE01)), _MM_CMPINT_LT) ==
         ~__mmask32{0};
}

// 32 lanes, `low` into the first 16 words of the result.
inline __m512i round_to_bfloat16(__m512 low, __m512 high) {
  const __m512i rounded = (__m512i)_mm512_cvtne2ps_pbh(high, low);
  if (all_normal_or_inf(rounded)) return rounded;
  return _mm512_inserti64x4(_mm512_castsi256_si512(round_to_bfloat16_exactly(low)), round_to_bfloat16_exactly(high), 1);
}

// 16 lanes.
inline __m256i round_to_bfloat16(__m512 value) {
  return _mm512_castsi512_si256(round_to_bfloat16(value, _mm512_set1_ps(1.0f)));
}

inline __m512 widen(__m256i bits) { return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(bits), 16)); }

// C is bfloat16 (`c`), or float32 (`c_float32`: the sums are kept unrounded, for callers that
// add several products before rounding, as the convolution's gradients do).
struct Epilogue {
  float alpha, beta;
  bool read_c;
  std::uint16_t* c;
  std::int64_t c_row_stride, c_col_stride;
  float* c_float32 = nullptr;
};

// One row of 32 sums: columns 0-15 and 16-31.
struct RowSums {
  __m512 low, high;
};

// Rows [first, first + count) of whole 32-column rows of sums (`row_sums(i)`: row i's
// RowSums) into a row-major C from (row0, col0), with alpha and beta decided once: each row
// one rounding and one 64-byte store (bfloat16) or two (float32). For products with a short k
// (the GPT's 128) the general loop, with its per-row and per-half branches and a rounding for
// each 16 columns, took as long as the AMX tiles and a seventh of the vdpbf16ps tiles' time.
template <bool kScale, bool kReadC, bool kFloat32C, class RowSumsOf>
void store_whole_rows(const RowSumsOf& row_sums, std::int64_t row0, std::int64_t col0, const Epilogue& e, int first,
                      int count) {
  const __m512 alpha = _mm512_set1_ps(e.alpha), beta = _mm512_set1_ps(e.beta);
  // C's first row and its stride in locals: read through `e` in the loop, they were loaded
  // again for every row (the compiler cannot tell that C's stores leave `e` alone).
  const std::int64_t c_row_stride = e.c_row_stride;
  auto* const c_first = [&] {
    if constexpr (kFloat32C) return e.c_float32 + row0 * c_row_stride + col0;
    else return e.c + row0 * c_row_stride + col0;
  }();
  for (int i = first; i < first + count; ++i) {
    auto [low, high] = row_sums(i);
    if constexpr (kScale) {
      low = _mm512_mul_ps(alpha, low);
      high = _mm512_mul_ps(alpha, high);
    }
    auto* c = c_first + i * c_row_stride;
    if constexpr (kFloat32C) {
      if constexpr (kReadC) {
        low = _mm512_fmadd_ps(beta, _mm512_loadu_ps(c), low);
        high = _mm512_fmadd_ps(beta, _mm512_loadu_ps(c + 16), high);
      }
      _mm512_storeu_ps(c, low);
      _mm512_storeu_ps(c + 16, high);
    } else {
      if constexpr (kReadC) {
        low = _mm512_fmadd_ps(beta, widen(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(c))), low);
        high = _mm512_fmadd_ps(beta, widen(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(c + 16))), high);
      }
      _mm512_storeu_si512(c, round_to_bfloat16(low, high));
    }
  }
}

// store_whole_rows with alpha, beta and C's type looked at once.
template <class RowSumsOf>
void store_whole_rows(const RowSumsOf& row_sums, std::int64_t row0, std::int64_t col0, const Epilogue& e, int first,
                      int count) {
  const bool scale = e.alpha != 1.0f, to_float32 = e.c_float32 != nullptr;
  if (to_float32) {
    if (scale && e.read_c) store_whole_rows<true, true, true>(row_sums, row0, col0, e, first, count);
    else if (scale) store_whole_rows<true, false, true>(row_sums, row0, col0, e, first, count);
    else if (e.read_c) store_whole_rows<false, true, true>(row_sums, row0, col0, e, first, count);
    else store_whole_rows<false, false, true>(row_sums, row0, col0, e, first, count);
  } else {
    if (scale && e.read_c) store_whole_rows<true, true, false>(row_sums, row0, col0, e, first, count);
    else if (scale) store_whole_rows<true, false, false>(row_sums, row0, col0, e, first, count);
    else if (e.read_c) store_whole_rows<false, true, false>(row_sums, row0, col0, e, first, count);
    else store_whole_rows<false, false, false>(row_sums, row0, col0, e, first, count);
  }
}

// Rows [first, first + count) of a whole 32 x 32 block of AMX sums (`sums`: the four 16 x 16 C
// tiles as AMX stores them: rows 0-15 in tiles 0 and 1, rows 16-31 in tiles 2 and 3).
inline void store_whole_block_rows(const float (&sums)[4][16][16], std::int64_t row0, std::int64_t col0,
                                   const Epilogue& e, int first, int count) {
  const auto row_sums = [&](int i) {
    const int tile = i / 16 * 2, row = i % 16;
    return RowSums{_mm512_loadu_ps(sums[tile][row]), _mm512_loadu_ps(sums[tile + 1][row])};
  };
  store_whole_rows(row_sums, row0, col0, e, first, count);
}

// Whether an AMX block of C takes the whole-rows epilogue between the next block's tile
// products: 32 x 32 of it in a row-major C.
inline bool is_whole_block(std::int64_t rows, std::int64_t cols, const Epilogue& e) {
  return rows == 32 && cols == bf16_panels::kNR && e.c_col_stride == 1;
}

EMBER_AVX512_INTRINSICS_END

}  // namespace ember::cpu::bf16_epilogue
