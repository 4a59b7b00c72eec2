// core/cpu/gemm_bf16_amx.cpp — performance code: AMX tiles for the bfloat16 GEMM: A packed
// tile by tile, and the 2 x 2 tile block (core/cpu/gemm_bf16_amx.h says what each does and
// why). This file alone is compiled with -mamx-tile -mamx-bf16 (core/CMakeLists.txt), and with
// AVX512-BF16 for the epilogue it runs between tile products (core/cpu/gemm_bf16_epilogue.h).
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include <ember/core/cpu/avx512_intrinsic_warnings.h>
#include <ember/core/cpu/gemm_bf16_amx.h>
#include <ember/core/cpu/gemm_bf16_epilogue.h>
#include <ember/core/cpu/transpose16_avx512.h>

namespace ember::cpu::bf16_amx {

using bf16_panels::kAmxTilePairs;
using bf16_panels::kNR;
using bf16_panels::Matrix16;

EMBER_AVX512_INTRINSICS_BEGIN  // core/cpu/avx512_intrinsic_warnings.h

namespace {

struct TileConfig {
  std::uint8_t palette = 1, start_row = 0;
  std::uint8_t reserved[14] = {};
  std::uint16_t bytes_per_row[16] = {};
  std::uint8_t rows[16] = {};
};

// A's packed 32-row block is a sequence of tiles, each 16 rows of 16 pairs (1 KiB): for every
// 16-pair step of k, the tile of rows 0-15 and then the tile of rows 16-31. A tile load then
// reads 16 consecutive cache lines, and a block's steps one sequential stream. (Packed row by
// row instead, a tile's rows lay a row of A apart: at k = 1024, 2 KiB, so all 32 rows of a
// step fell into two of L1's 64 sets.)
constexpr std::int64_t kAmxTileHalves = 16 * 2 * kAmxTilePairs;  // 16 rows of 32 bfloat16

// Where row i's values [32s, 32s + 32) of k go in the block: tile 2s + i / 16, its row i % 16.
inline std::uint16_t* a_tile_row(std::uint16_t* block, std::int64_t i, std::int64_t step) {
  return block + (2 * step + i / 16) * kAmxTileHalves + (i % 16) * 2 * kAmxTilePairs;
}

}  // namespace

void configure_tiles() {
  alignas(64) TileConfig config;
  for (int t = 0; t < 8; ++t) {
    config.bytes_per_row[t] = 64;
    config.rows[t] = 16;
  }
  // GCC 12 does not count ldtilecfg's 64-byte read as a use of the fields: at -O2 it kept only
  // the palette byte's store, every tile got 0 rows, and the first tile instruction faulted
  // (SIGILL). The empty asm tells it the memory is read.
  asm volatile("" : : "r"(&config) : "memory");
  _tile_loadconfig(&config);
}

void release_tiles() { _tile_release(); }

void pack_a_block(const Matrix16& a, std::int64_t row0, std::int64_t rows, std::int64_t k, std::int64_t padded_pairs,
                 std::uint16_t* out) {
  constexpr std::int64_t kStepHalves = 2 * kAmxTilePairs;
  const std::int64_t steps = padded_pairs / kAmxTilePairs;
  if (a.col_stride == 1) {
    // Rows of A contiguous: step by step, each tile row one 64-byte move (masked past k, zeros
    // in the rows past `rows`), so the block is written once, front to back (a step's two
    // tiles are adjacent, so its 32 tile rows are too).
    for (std::int64_t step = 0; step < steps; ++step) {
      const std::int64_t first = step * kStepHalves, count = std::clamp<std::int64_t>(k - first, 0, kStepHalves);
      const __mmask32 lanes = count == kStepHalves ? ~__mmask32{0} : (__mmask32{1} << count) - 1;
      std::uint16_t* tiles = a_tile_row(out, 0, step);
      for (std::int64_t i = 0; i < kBlockRows; ++i) {
        const __m512i values = i < rows ? _mm512_maskz_loadu_epi16(lanes, a.data + (row0 + i) * a.row_stride + first)
                                        : _mm512_setzero_si512();
        _mm512_storeu_si512(tiles + i * kStepHalves, values);
      }
    }
    return;
  }
  if (a.row_stride == 1) {
    // Column-major A (a transposed operand: the weight gradients' dYᵀ, the convolution's Wᵀ):
    // each column's 32 rows are one 64-byte load. Two columns (a pair of k) interleave into 32
    // words, rows 0-15 in one register and rows 16-31 in another (the vdpbf16ps pack's two
    // permutes); a step's 16 pairs then transpose as two 16 x 16 blocks of words, each row of
    // which is a tile row. (Element by element, this pack took more time than the GPT's
    // bfloat16 step spent in the tile products.)
    const __m512i low = _mm512_load_si512(bf16_panels::kInterleaveLow);
    const __m512i high = _mm512_add_epi16(low, _mm512_set1_epi16(16));
    const __mmask32 lanes = rows >= kBlockRows ? ~__mmask32{0} : (__mmask32{1} << rows) - 1;
    const std::uint16_t* first = a.data + row0;
    for (std::int64_t step = 0; step < steps; ++step) {
      __m512i top[16], bottom[16];  // pair j of rows 0-15 and of rows 16-31, one word a row
      for (int j = 0; j < 16; ++j) {
        const std::int64_t p = step * kStepHalves + 2 * j;
        const __m512i even = p < k ? _mm512_maskz_loadu_epi16(lanes, first + p * a.col_stride) : _mm512_setzero_si512();
        const __m512i odd =
            p + 1 < k ? _mm512_maskz_loadu_epi16(lanes, first + (p + 1) * a.col_stride) : _mm512_setzero_si512();
        top[j] = _mm512_permutex2var_epi16(even, low, odd);
        bottom[j] = _mm512_permutex2var_epi16(even, high, odd);
      }
      transpose16(top);
      transpose16(bottom);
      std::uint16_t* tiles = a_tile_row(out, 0, step);  // the step's two tiles, 32 rows in a row
      for (int i = 0; i < 16; ++i) {
        _mm512_storeu_si512(tiles + i * kStepHalves, top[i]);
        _mm512_storeu_si512(tiles + (16 + i) * kStepHalves, bottom[i]);
      }
    }
    return;
  }
  // Other strides: element by element, zeros past k and in the rows past `rows`.
  for (std::int64_t i = 0; i < kBlockRows; ++i) {
    const std::int64_t filled = i < rows ? k : 0;  // values of this row written (the rest are zeros)
    if (i < rows) {
      const std::uint16_t* row = a.data + (row0 + i) * a.row_stride;
      for (std::int64_t step = 0; step * kStepHalves < k; ++step) {
        std::uint16_t* piece = a_tile_row(out, i, step);
        const std::int64_t first = step * kStepHalves, count = std::min(kStepHalves, k - first);
        for (std::int64_t p = 0; p < count; ++p) piece[p] = row[(first + p) * a.col_stride];
      }
    }
    for (std::int64_t step = filled / kStepHalves; step < steps; ++step) {
      std::uint16_t* piece = a_tile_row(out, i, step);
      const std::int64_t from = std::max<std::int64_t>(0, filled - step * kStepHalves);
      std::fill(piece + from, piece + kStepHalves, std::uint16_t{0});
    }
  }
}

ABlock packed_a_block(const std::uint16_t* block) {
  return {block, 2 * kAmxTilePairs * 2, 2 * kAmxTileHalves, kAmxTileHalves};
}

ABlock direct_a_block(const Matrix16& a, std::int64_t row0) {
  return {a.data + row0 * a.row_stride, a.row_stride * 2, 2 * kAmxTilePairs, 16 * a.row_stride};
}

bool reads_a_directly(const Matrix16& a, std::int64_t k) {
  return a.col_stride == 1 && k % (2 * kAmxTilePairs) == 0 && a.row_stride * 2 <= 1024;
}

void run_block(const ABlock& a_block, const std::uint16_t* b_panel, std::int64_t padded_pairs, L2Prefetch& prefetch,
               const PendingBlock* pending) {
  constexpr std::int64_t b_row_bytes = 2 * kNR * 2;  // a pair row of the B panel
  const std::int64_t steps = padded_pairs / kAmxTilePairs;  // 0 where k = 0
  const int pending_rows_per_step = static_cast<int>(steps > 0 ? (kBlockRows + steps - 1) / steps : kBlockRows);
  int pending_done = pending == nullptr ? static_cast<int>(kBlockRows) : 0;
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  const std::uint16_t* a = a_block.data;
  for (std::int64_t pair0 = 0; pair0 < padded_pairs; pair0 += kAmxTilePairs, a += a_block.step_halves) {
    // Each load just before the first product that needs it, so the first product starts
    // after two loads rather than four.
    const std::uint16_t* b = b_panel + pair0 * 2 * kNR;
    for (std::int64_t line = 0; line < prefetch.lines_per_step && prefetch.next < prefetch.end; ++line) {
      _mm_prefetch(prefetch.next, _MM_HINT_T1);
      prefetch.next += 64;
    }
    _tile_loadd(4, a, a_block.row_bytes);  // rows 0-15
    _tile_loadd(6, b, b_row_bytes);        // columns 0-15
    _tile_dpbf16ps(0, 4, 6);
    _tile_loadd(7, b + 32, b_row_bytes);  // columns 16-31
    _tile_dpbf16ps(1, 4, 7);
    _tile_loadd(5, a + a_block.lower_halves, a_block.row_bytes);  // rows 16-31
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
    if (pending_done < kBlockRows) {
      const int rows = std::min(pending_rows_per_step, static_cast<int>(kBlockRows) - pending_done);
      bf16_epilogue::store_whole_block_rows(*pending->sums, pending->row0, pending->col0, *pending->epilogue,
                                            pending_done, rows);
      pending_done += rows;
    }
  }
  if (pending_done < kBlockRows)  // k = 0: no steps to put them between
    bf16_epilogue::store_whole_block_rows(*pending->sums, pending->row0, pending->col0, *pending->epilogue, pending_done,
                                          static_cast<int>(kBlockRows) - pending_done);
}

void store_block(float (&out)[4][16][16]) {
  _tile_stored(0, out[0], 64);
  _tile_stored(1, out[1], 64);
  _tile_stored(2, out[2], 64);
  _tile_stored(3, out[3], 64);
}

EMBER_AVX512_INTRINSICS_END

}  // namespace ember::cpu::bf16_amx
