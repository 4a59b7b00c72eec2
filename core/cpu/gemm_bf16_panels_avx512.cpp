// core/cpu/gemm_bf16_panels_avx512.cpp — performance code: writing the bfloat16 GEMM's packed
// B panels from outside the GEMM (core/cpu/gemm_kernels.h, BFloat16PanelLayout), so that the
// convolution's im2col (core/cpu/im2col.cpp, im2col_bfloat16_panels) produces them directly
// instead of a cols buffer the GEMM would read back and interleave. Two rows of k go into each
// panel's pair, interleaved column by column by the same two permutes the GEMM's own pack
// uses (core/cpu/gemm_kernel_bf16_avx512.cpp, pack_b_panel). Built with AVX-512 (BW for the
// 16-bit masked loads); called only when the bfloat16 GEMM is usable.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include <ember/core/cpu/gemm_bf16_layout.h>
#include <ember/core/cpu/gemm_kernels.h>
#include <ember/core/cpu/transpose16_avx512.h>

namespace ember::cpu {

using bf16_panels::kInterleaveLow;
using bf16_panels::kNR;
using bf16_panels::packed_pairs;

BFloat16PanelLayout bfloat16_panel_layout(std::int64_t k, std::int64_t n) {
  BFloat16PanelLayout layout;
  layout.amx = amx_bfloat16_usable();
  layout.pairs = packed_pairs(k, layout.amx);
  layout.panel_halves = layout.pairs * 2 * kNR;
  layout.panels = (n + kNR - 1) / kNR;
  return layout;
}

namespace {

// Entries [32q, 32q + 32) of a masked row over `base` as 32 lanes.
__m512i masked_row_lanes(const std::uint16_t* base, const BFloat16MaskedRow& row, std::int64_t q) {
  const __mmask32 lanes = row.lane_masks[q];
  if (lanes == 0) return _mm512_setzero_si512();
  // The 32 lanes start at base[offset + 32q], which may lie outside the source: the masked-off
  // lanes are neither read nor faulted on, so the address is formed as an integer.
  const auto* first = reinterpret_cast<const std::uint16_t*>(  // NOLINT: see above
      reinterpret_cast<std::uintptr_t>(base) + static_cast<std::uintptr_t>((row.offset + q * kNR) * 2));
  return _mm512_maskz_loadu_epi16(lanes, first);
}

}  // namespace

// Panel by panel, so the stores run through each panel in order (the source, one sample's
// planes, stays in L1 meanwhile).
void pack_bfloat16_rows(const std::uint16_t* base, const BFloat16MaskedRow* rows, const BFloat16PanelLayout& layout,
                        std::uint16_t* packed) {
  const __m512i low = _mm512_load_si512(kInterleaveLow);
  const __m512i high = _mm512_add_epi16(low, _mm512_set1_epi16(16));
  for (std::int64_t q = 0; q < layout.panels; ++q) {
    std::uint16_t* out = packed + q * layout.panel_halves;
    for (std::int64_t pair = 0; pair < layout.pairs; ++pair, out += 2 * kNR) {
      const __m512i even_lanes = masked_row_lanes(base, rows[2 * pair], q);
      const __m512i odd_lanes = masked_row_lanes(base, rows[2 * pair + 1], q);
      _mm512_store_si512(out, _mm512_permutex2var_epi16(even_lanes, low, odd_lanes));
      _mm512_store_si512(out + kNR, _mm512_permutex2var_epi16(even_lanes, high, odd_lanes));
    }
  }
}

// A chunk of 32 entries of a row is 16 words, word i the pair (2i, 2i + 1); a panel's pair
// p = 16c + i holds word i of its 32 rows side by side. So each chunk of a panel's 32 rows is
// two 16 x 16 word transposes: rows 0-15 give each pair's first 16 words, rows 16-31 the rest.
void pack_bfloat16_rows_transposed(const std::uint16_t* base, const BFloat16MaskedRow* rows,
                                   const BFloat16PanelLayout& layout, std::uint16_t* packed) {
  for (std::int64_t q = 0; q < layout.panels; ++q) {
    const BFloat16MaskedRow* panel_rows = rows + q * kNR;
    for (std::int64_t chunk = 0; 16 * chunk < layout.pairs; ++chunk) {
      const std::int64_t pairs = std::min<std::int64_t>(16, layout.pairs - 16 * chunk);
      std::uint16_t* out = packed + q * layout.panel_halves + 16 * chunk * 2 * kNR;
      for (int half = 0; half < 2; ++half) {
        __m512i words[16];
        for (int j = 0; j < 16; ++j) words[j] = masked_row_lanes(base, panel_rows[16 * half + j], chunk);
        transpose16(words);
        for (std::int64_t i = 0; i < pairs; ++i) _mm512_store_si512(out + i * 2 * kNR + 16 * 2 * half, words[i]);
      }
    }
  }
}

}  // namespace ember::cpu
