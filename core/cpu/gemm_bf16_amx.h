// core/cpu/gemm_bf16_amx.h — performance code: the AMX half of the bfloat16 GEMM
// (core/cpu/gemm_kernel_bf16_avx512.cpp, which packs B, splits the work and applies the
// epilogue). Implemented in core/cpu/gemm_bf16_amx.cpp, built with AMX; called only where
// amx_bfloat16_usable() (core/cpu/gemm_kernels.h) said yes. docs/mixed-precision.md, "On AMX
// tiles", explains the instruction and the layouts.
//
// An AMX tile register holds up to 16 rows of 64 bytes. tdpbf16ps C, A, B multiplies a
// 16-row A tile of 16 bfloat16 pairs per row (32 values of k) by a B tile of 16 pair rows of
// 16 columns (each column's two values of a pair side by side) into a 16 x 16 float C tile:
// 16 x 16 x 32 multiply-adds in one instruction, each pair's two products added to C as
// vdpbf16ps adds them (and, like it, with subnormal inputs and results taken as zero). B's
// tiles are read straight from the B panels above, whose rows are exactly that pair layout,
// 32 columns wide: a tile is 16 columns of 16 consecutive pair rows, one panel row (128
// bytes) apart. A is packed again, tile by tile (pack_a_block below), padded with zero pairs to
// a whole number of 16-pair tiles, unless its rows can be read as they are (reads_a_directly).
//
// Register blocking: 2 x 2 C tiles (32 rows x 32 columns of C, the 16 KiB tile-register file's
// tmm0-3), two A tiles (tmm4-5) and two B tiles (tmm6-7); each 16-pair step loads 4 tiles for 4
// tdpbf16ps. The C tiles are stored to a float buffer at the end and go through the same
// epilogue (alpha, beta, rounding) as the vdpbf16ps tiles.
#pragma once

#include <cstdint>

#include <ember/core/cpu/gemm_bf16_layout.h>

namespace ember::cpu::bf16_epilogue {
struct Epilogue;  // core/cpu/gemm_bf16_epilogue.h
}

namespace ember::cpu::bf16_amx {

constexpr std::int64_t kBlockRows = 32;  // rows of C per block: two A tiles

// Sets this thread's tile configuration (every tile 16 rows of 64 bytes); the thread gives the
// tile state back with release_tiles() before it leaves the GEMM.
void configure_tiles();
void release_tiles();

// Packs rows [row0, row0 + rows) of A (rows <= kBlockRows) into one block of
// 2 * padded_pairs / kAmxTilePairs tiles (bf16_panels::packed_pairs), zeros past k up to the
// padding and in the rows past `rows`.
void pack_a_block(const bf16_panels::Matrix16& a, std::int64_t row0, std::int64_t rows, std::int64_t k,
                  std::int64_t padded_pairs, std::uint16_t* out);

// Lines to bring into L2 while blocks run, a few each 16-pair step: the caller's next A block.
struct L2Prefetch {
  const char* next;  // the first line not yet asked for
  const char* end;
  std::int64_t lines_per_step;
};

// Where a 32-row block of A's tiles lies: packed by pack_a_block, or A itself where its rows
// can be loaded as tile rows (reads_a_directly).
struct ABlock {
  const std::uint16_t* data;  // step 0's tile of rows 0-15
  std::int64_t row_bytes;     // from one row of a tile to the next
  std::int64_t step_halves;   // from one 16-pair step's tiles to the next
  std::int64_t lower_halves;  // from the tile of rows 0-15 to the tile of rows 16-31
};
ABlock packed_a_block(const std::uint16_t* block);
ABlock direct_a_block(const bf16_panels::Matrix16& a, std::int64_t row0);

// Whether tiles load A's rows straight from A, with no packing: rows contiguous, k a whole
// number of tiles (a tile's 32 values of k are then a row's 64 bytes, and no padding is
// needed), and rows at most 1 KiB apart (further, a step's 32 rows would crowd into a few of
// L1's sets: the reason A is packed at all). The GPT's Linear layers (k = 128, 512).
bool reads_a_directly(const bf16_panels::Matrix16& a, std::int64_t k);

// A whole 32 x 32 block whose sums wait in `sums` (store_block's layout) for their epilogue,
// into C at (row0, col0).
struct PendingBlock {
  const float (*sums)[4][16][16];
  std::int64_t row0, col0;
  const bf16_epilogue::Epilogue* epilogue;
};

// One 32 x 32 block of C over the whole of k, on tiles: an A block against a B panel
// (bf16_panels layout, padded to whole tiles), the sums left in the C tiles. `pending`, if not
// null, is the previous block: its epilogue runs here, a few rows after each step's tile
// products. (Run after the tiles instead, it did not overlap them: a block's tiles and its
// epilogue then took their two times added up, and at k = 128 the epilogue is a third of that.)
// The products run on after this returns, until store_block waits for them.
void run_block(const ABlock& a_block, const std::uint16_t* b_panel, std::int64_t padded_pairs, L2Prefetch& prefetch,
               const PendingBlock* pending);
// The C tiles of the last run_block into `out`: rows 0-15 x columns 0-15, 0-15 x 16-31,
// 16-31 x 0-15, 16-31 x 16-31.
void store_block(float (&out)[4][16][16]);

}  // namespace ember::cpu::bf16_amx
