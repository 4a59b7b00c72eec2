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

// Entries [l0, l0 + count) of a masked row as 32 lanes (count <= 32), zeros past count.
__m512i masked_row_lanes(const BFloat16MaskedRow& row, std::int64_t l0, std::int64_t count) {
  const std::int64_t begin = std::max(l0, row.first), end = std::min(l0 + count, row.last);
  if (row.plane == nullptr || end <= begin) return _mm512_setzero_si512();
  // Lanes [begin - l0, end - l0) of the 32, and of those the ones keep_bits marks (l0 is a
  // multiple of 32: one word).
  const std::uint64_t range = ((std::uint64_t{1} << (end - l0)) - 1) & ~((std::uint64_t{1} << (begin - l0)) - 1);
  const auto lanes = static_cast<__mmask32>(range & row.keep_bits[l0 / 32]);
  // The 32 lanes start at plane[l0 + shift], which may lie outside the plane: the masked-off
  // lanes are neither read nor faulted on, so the address is formed as an integer.
  const auto* first = reinterpret_cast<const std::uint16_t*>(  // NOLINT: see above
      reinterpret_cast<std::uintptr_t>(row.plane) + static_cast<std::uintptr_t>((l0 + row.shift) * 2));
  return _mm512_maskz_loadu_epi16(lanes, first);
}

}  // namespace

void pack_bfloat16_row_pair(const BFloat16MaskedRow& even, const BFloat16MaskedRow& odd, std::int64_t n,
                            const BFloat16PanelLayout& layout, std::int64_t pair, std::uint16_t* packed) {
  const __m512i low = _mm512_load_si512(kInterleaveLow);
  const __m512i high = _mm512_add_epi16(low, _mm512_set1_epi16(16));
  for (std::int64_t q = 0; q < layout.panels; ++q) {
    const std::int64_t l0 = q * kNR, count = std::min<std::int64_t>(kNR, n - l0);
    const __m512i even_lanes = masked_row_lanes(even, l0, count), odd_lanes = masked_row_lanes(odd, l0, count);
    std::uint16_t* out = packed + q * layout.panel_halves + pair * 2 * kNR;
    _mm512_storeu_si512(out, _mm512_permutex2var_epi16(even_lanes, low, odd_lanes));
    _mm512_storeu_si512(out + kNR, _mm512_permutex2var_epi16(even_lanes, high, odd_lanes));
  }
}

}  // namespace ember::cpu
