// core/cpu/gemm_bf16_layout.h — performance code: the packed-panel geometry the bfloat16 GEMM
// (core/cpu/gemm_kernel_bf16_avx512.cpp, with its AMX tiles in core/cpu/gemm_bf16_amx.cpp) and
// the producers that write its B panels directly (core/cpu/gemm_bf16_panels_avx512.cpp, for the
// convolution's im2col) must agree on. Included only by those files, all built with AVX-512.
#pragma once

#include <cstdint>

namespace ember::cpu::bf16_panels {

constexpr int kNR = 32;                     // columns of a B panel: two zmm of floats in C
constexpr std::int64_t kAmxTilePairs = 16;  // k pairs in one AMX tile

// The interleaving permutes: word j of the first output holds (even[j], odd[j]) for j < 16,
// of the second output for j + 16 (even and odd: two rows of k, 32 columns each).
alignas(64) inline constexpr std::uint16_t kInterleaveLow[32] = {0,  32, 1,  33, 2,  34, 3,  35, 4,  36, 5,
                                                                37, 6,  38, 7,  39, 8,  40, 9,  41, 10, 42,
                                                                11, 43, 12, 44, 13, 45, 14, 46, 15, 47};

// The operands as GemmPlan describes them, bfloat16 bits, one batch entry.
struct Matrix16 {
  const std::uint16_t* data;
  std::int64_t row_stride, col_stride;
  std::uint16_t at(std::int64_t row, std::int64_t col) const { return data[row * row_stride + col * col_stride]; }
};

// k pairs per packed panel: on AMX every panel's k is padded to whole tiles.
inline std::int64_t packed_pairs(std::int64_t k, bool amx) {
  return amx ? ((k + 1) / 2 + kAmxTilePairs - 1) / kAmxTilePairs * kAmxTilePairs : (k + 1) / 2;
}

}  // namespace ember::cpu::bf16_panels
