// core/cpu/gemm_kernel_bf16_avx512.cpp — the bfloat16 GEMM on AVX512-BF16 (vdpbf16ps):
// 16-bit operands read directly, float32 accumulation, the result rounded once.
//
// Performance code: read core/reference/gemm_loops.cpp and docs/mixed-precision.md first.
// Tutorial §12 (mixed precision). core/cpu/gemm.cpp calls this for a bfloat16 GEMM when the
// CPU has AVX512-BF16 (cpuid, or EMBER_GEMM_KERNEL=avx512); elsewhere core/linalg.cpp widens
// the operands to float32 and runs the float32 GEMM. This file alone is compiled with
// -mavx512f -mavx512vl -mavx512bw -mavx512bf16 (core/CMakeLists.txt).
//
// The instruction. vdpbf16ps acc, a, b treats each 32-bit lane of a and b as a *pair* of
// bfloat16 values and adds both products to the lane's float: acc[j] += a[2j]·b[2j] +
// a[2j+1]·b[2j+1]. A product of two bfloat16 values is exact in float32, so only the additions
// round. One zmm instruction is 32 multiply-adds: twice the float32 FMA's 16, which is where
// bfloat16's speed comes from on a CPU (the operands are also half the bytes).
//
// So the packed layouts pair up consecutive k:
//   A panel  [k pair][MR rows]        one 32-bit word per row: (A(i, 2p), A(i, 2p+1))
//   B panel  [k pair][NR columns][2]  the two rows 2p and 2p+1 interleaved column by column
// and the micro-kernel broadcasts a row's pair of A against two zmm of B (32 columns). An odd
// k is padded with a zero, rows past m and columns past n with zeros (computed, never stored).
//
// Register blocking: a 12 x 32 float tile = 24 accumulators + 2 zmm of B + a broadcast,
// 27 of the 32 zmm registers. Per k pair: 2 vector loads and 12 broadcast loads for 24
// vdpbf16ps (768 multiply-adds), so the loads keep up with a core issuing one zmm dot product
// per cycle, and 24 independent chains cover its latency. An edge tile runs only the rows (in
// fours) and 16-column halves it stores: tile<ROWS, HALVES> below.
//
// Blocking: each tile runs over the whole of k, keeping its accumulators in registers, and
// writes C once (the result is rounded once, as PyTorch's, with no float32 copy of C). A tile
// streams 176 bytes per k pair from L1/L2 for 24 cycles of arithmetic, which L2 sustains, so
// k needs no slicing. A unit of work is one A panel against a group of B panels that stays in
// L2; each thread packs and computes its own groups first and then helps the others, and a
// small A is packed by every thread for itself (core/cpu/gemm_bf16_schedule.h). All of A and
// B is packed once per batch entry before the tiles that read it run (B may come packed
// already: gemm_bfloat16_packed_b_avx512, for the convolution's im2col, which writes its rows
// in this layout); every C element is one tile's dot product in the order of k, so the result
// does not depend on the thread count.
//
// Rounding differs from the float32 path (widen, float32 GEMM, round): the pairs are summed
// in another order, and vdpbf16ps treats subnormal inputs and results as zero (as oneDNN's
// bfloat16 GEMM, which PyTorch's CPU matmul uses, does). The tests compare the two with a
// bfloat16 tolerance (tests/core/test_gemm_bfloat16.cpp).
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <new>

#include <ember/core/cpu/avx512_intrinsic_warnings.h>
#include <ember/core/cpu/gemm_bf16_amx.h>
#include <ember/core/cpu/gemm_bf16_epilogue.h>
#include <ember/core/cpu/gemm_bf16_layout.h>
#include <ember/core/cpu/gemm_bf16_schedule.h>
#include <ember/core/cpu/gemm_kernels.h>
#include <ember/core/error.h>
#include <ember/core/parallel.h>
#include <ember/core/strided_index.h>

namespace ember::cpu {

using bf16_amx::kBlockRows;
using bf16_epilogue::Epilogue;
using bf16_epilogue::round_to_bfloat16;
using bf16_epilogue::widen;
using bf16_panels::kAmxTilePairs;
using bf16_panels::Matrix16;
using bf16_panels::kInterleaveLow;
using bf16_panels::kNR;
using bf16_panels::packed_pairs;

namespace {

EMBER_AVX512_INTRINSICS_BEGIN  // core/cpu/avx512_intrinsic_warnings.h

// An A up to this size (half of a 2 MiB L2) stays in L2 while its blocks are reused; a larger
// one comes from L3, and the AMX loop asks the next A block into L2 ahead of its use.
constexpr std::int64_t kAStaysInL2Bytes = std::int64_t{1} << 20;
constexpr int kMR = 12;                 // rows of a tile (kNR columns: gemm_bf16_layout.h)
// Below this many multiply-adds the product runs on the calling thread (as the float32 GEMM).
constexpr std::int64_t kParallelMinWork = 64 * 64 * 64;

using Word = std::uint32_t;  // a pair of bfloat16: the even k in the low half


inline Word pair(std::uint16_t even, std::uint16_t odd) { return Word{even} | (Word{odd} << 16); }

// The float32 kernel's transposing packs (core/cpu/gemm_kernel_avx512.cpp: out[p * W + i] =
// src[i * stride + p] for W = 12 and W = 32, 16 x 16 blocks transposed in registers) move
// 32-bit words without looking at them, so they transpose pairs of bfloat16 as well: a
// row-major A and a column-major B hold each pair as one word (when rows start on a pair).
const MicroKernel<float>& word_transposer() {
  static const MicroKernel<float> kernel = avx512_kernel_f32();
  return kernel;
}
const float* as_words(const std::uint16_t* p) { return reinterpret_cast<const float*>(p); }  // NOLINT: bits only

// out[p * kMR + i] = (A(row0 + i, 2p), A(row0 + i, 2p + 1)), zeros past `rows` and past k.
void pack_a_panel(const Matrix16& a, std::int64_t row0, std::int64_t rows, std::int64_t k, Word* out) {
  const std::int64_t pairs = (k + 1) / 2, full_pairs = k / 2;
  const std::uint16_t* first = a.data + row0 * a.row_stride;
  if (a.row_stride == 1 && a.col_stride != 1) {
    // Column-major (a transposed operand): columns 2p and 2p + 1 interleaved by one permute.
    const __m512i low = _mm512_load_si512(kInterleaveLow);
    const auto lanes = static_cast<__mmask32>((1u << rows) - 1);
    for (std::int64_t p = 0; p < pairs; ++p) {
      const std::uint16_t* column = first + 2 * p * a.col_stride;
      const __m512i even = _mm512_maskz_loadu_epi16(lanes, column);
      const __m512i odd = 2 * p + 1 < k ? _mm512_maskz_loadu_epi16(lanes, column + a.col_stride) : _mm512_setzero_si512();
      _mm512_mask_storeu_epi32(out + p * kMR, static_cast<__mmask16>((1u << kMR) - 1),
                               _mm512_permutex2var_epi16(even, low, odd));
    }
    return;
  }
  // Row-major: the transposing pack does the full pairs (and the zero rows); other strides
  // element by element. The odd k's pair below.
  const bool transposed = a.col_stride == 1 && a.row_stride % 2 == 0 &&
                          word_transposer().pack_a(as_words(first), a.row_stride / 2, 1, rows, full_pairs,
                                                   reinterpret_cast<float*>(out));
  if (!transposed) {
    if (rows < kMR)
      for (std::int64_t p = 0; p < full_pairs; ++p) std::fill(out + p * kMR + rows, out + (p + 1) * kMR, Word{0});
    for (std::int64_t i = 0; i < rows; ++i) {
      const std::uint16_t* row = first + i * a.row_stride;
      for (std::int64_t p = 0; p < full_pairs; ++p)
        out[p * kMR + i] = pair(row[2 * p * a.col_stride], row[(2 * p + 1) * a.col_stride]);
    }
  }
  if (k % 2 != 0) {
    for (std::int64_t i = 0; i < kMR; ++i)
      out[full_pairs * kMR + i] = i < rows ? pair(first[i * a.row_stride + (k - 1) * a.col_stride], 0) : Word{0};
  }
}

// out[(p * kNR + j) * 2 + h] = B(2p + h, col0 + j), zeros past `cols` and past k.
void pack_b_panel(const Matrix16& b, std::int64_t col0, std::int64_t cols, std::int64_t k, std::uint16_t* out) {
  const std::int64_t pairs = (k + 1) / 2, full_pairs = k / 2;
  if (b.col_stride == 1) {
    // Row-major: rows 2p and 2p + 1 of (up to) 32 columns, interleaved by two permutes.
    const __m512i low = _mm512_load_si512(kInterleaveLow);
    const __m512i high = _mm512_add_epi16(low, _mm512_set1_epi16(16));
    const __mmask32 columns = cols >= 32 ? ~__mmask32{0} : static_cast<__mmask32>((1u << cols) - 1);
    for (std::int64_t p = 0; p < pairs; ++p) {
      const std::uint16_t* row0 = b.data + 2 * p * b.row_stride + col0;
      const __m512i even = _mm512_maskz_loadu_epi16(columns, row0);
      const __m512i odd = 2 * p + 1 < k ? _mm512_maskz_loadu_epi16(columns, row0 + b.row_stride) : _mm512_setzero_si512();
      _mm512_storeu_si512(out + p * 2 * kNR, _mm512_permutex2var_epi16(even, low, odd));
      _mm512_storeu_si512(out + p * 2 * kNR + kNR, _mm512_permutex2var_epi16(even, high, odd));
    }
    return;
  }
  Word* words = reinterpret_cast<Word*>(out);  // NOLINT: the panel is 32-bit words of pairs
  const std::uint16_t* first = b.data + col0 * b.col_stride;
  // Column-major (a transposed operand): the transposing pack does the full pairs; other
  // strides element by element. The odd k's pair below.
  const bool transposed = b.row_stride == 1 && b.col_stride % 2 == 0 &&
                          word_transposer().pack_b(as_words(first), b.col_stride / 2, 1, cols, full_pairs,
                                                   reinterpret_cast<float*>(out));
  if (!transposed) {
    if (cols < kNR)
      for (std::int64_t p = 0; p < full_pairs; ++p) std::fill(words + p * kNR + cols, words + (p + 1) * kNR, Word{0});
    for (std::int64_t j = 0; j < cols; ++j) {
      const std::uint16_t* column = first + j * b.col_stride;
      for (std::int64_t p = 0; p < full_pairs; ++p)
        words[p * kNR + j] = pair(column[2 * p * b.row_stride], column[(2 * p + 1) * b.row_stride]);
    }
  }
  if (k % 2 != 0) {
    for (std::int64_t j = 0; j < kNR; ++j)
      words[full_pairs * kNR + j] = j < cols ? pair(first[j * b.col_stride + (k - 1) * b.row_stride], 0) : Word{0};
  }
}

// C(i, j) = alpha * acc + beta * C(i, j) in float32 for the tile's valid part, rounded once
// into a bfloat16 C.
template <int ROWS>
inline void store_tile(const __m512 (&acc)[ROWS][2], std::int64_t row0, std::int64_t rows, std::int64_t col0,
                       std::int64_t cols, const Epilogue& e) {
  const __m512 alpha = _mm512_set1_ps(e.alpha), beta = _mm512_set1_ps(e.beta);
  const std::int64_t valid_rows = std::min<std::int64_t>(rows, ROWS);  // rows <= ROWS; said for the compiler
  for (std::int64_t i = 0; i < valid_rows; ++i) {
    for (int half = 0; half < 2; ++half) {
      const std::int64_t first = col0 + half * 16, count = std::min<std::int64_t>(16, col0 + cols - first);
      if (count <= 0) break;
      __m512 value = e.alpha == 1.0f ? acc[i][half] : _mm512_mul_ps(alpha, acc[i][half]);
      if (e.c_float32 != nullptr) {
        float* c = e.c_float32 + (row0 + i) * e.c_row_stride + first * e.c_col_stride;
        const auto lanes = static_cast<__mmask16>((1u << count) - 1);
        if (e.c_col_stride == 1) {
          if (e.read_c) value = _mm512_fmadd_ps(beta, _mm512_maskz_loadu_ps(lanes, c), value);
          _mm512_mask_storeu_ps(c, lanes, value);
        } else {
          alignas(64) float lane[16];
          _mm512_store_ps(lane, value);
          for (std::int64_t j = 0; j < count; ++j)
            c[j * e.c_col_stride] = e.read_c ? std::fma(e.beta, c[j * e.c_col_stride], lane[j]) : lane[j];
        }
        continue;
      }
      std::uint16_t* c = e.c + (row0 + i) * e.c_row_stride + first * e.c_col_stride;
      if (e.c_col_stride == 1) {
        const auto lanes = static_cast<__mmask16>((1u << count) - 1);
        if (e.read_c) value = _mm512_fmadd_ps(beta, widen(_mm256_maskz_loadu_epi16(lanes, c)), value);
        _mm256_mask_storeu_epi16(c, lanes, round_to_bfloat16(value));
      } else {  // a strided C (a transposed output view): element by element
        alignas(64) float lane[16];
        alignas(32) std::uint16_t old[16] = {}, rounded[16];
        for (std::int64_t j = 0; j < count && e.read_c; ++j) old[j] = c[j * e.c_col_stride];
        if (e.read_c) value = _mm512_fmadd_ps(beta, widen(_mm256_load_si256(reinterpret_cast<const __m256i*>(old))), value);
        _mm512_store_ps(lane, value);
        _mm256_store_si256(reinterpret_cast<__m256i*>(rounded), round_to_bfloat16(_mm512_load_ps(lane)));
        for (std::int64_t j = 0; j < count; ++j) c[j * e.c_col_stride] = rounded[j];
      }
    }
  }
}

// One tile over the whole of k (the strategy comment at the top of the file): ROWS rows (a
// multiple of 4, at most kMR) and HALVES 16-column halves of the 12 x 32 tile, so that an edge
// tile computes only what it stores: a 64-row A is five 12-row tiles and one of 4 rows (not a
// sixth 12-row tile, a third of it padding), and a last column panel of 4 columns is one half.
// The sums live in local registers and reach `acc` once, after the loop (an `acc` array
// updated in the loop was kept on the stack by GCC, B's two vectors with it).
template <int ROWS, int HALVES>
void tile(const Word* a_panel, const std::uint16_t* b_panel, std::int64_t pairs, __m512 (&acc)[kMR][2]) {
  __m512 sum[ROWS][HALVES];
#pragma GCC unroll 12
  for (int i = 0; i < ROWS; ++i)
#pragma GCC unroll 2
    for (int half = 0; half < HALVES; ++half) sum[i][half] = _mm512_setzero_ps();
  for (std::int64_t p = 0; p < pairs; ++p) {
    __m512bh b[HALVES];
#pragma GCC unroll 2
    for (int half = 0; half < HALVES; ++half) b[half] = (__m512bh)_mm512_loadu_si512(b_panel + (p * 2 + half) * kNR);
#pragma GCC unroll 12
    for (int i = 0; i < ROWS; ++i) {
      const __m512bh a = (__m512bh)_mm512_set1_epi32(static_cast<int>(a_panel[p * kMR + i]));
#pragma GCC unroll 2
      for (int half = 0; half < HALVES; ++half) sum[i][half] = _mm512_dpbf16_ps(sum[i][half], a, b[half]);
    }
  }
#pragma GCC unroll 12
  for (int i = 0; i < ROWS; ++i)
#pragma GCC unroll 2
    for (int half = 0; half < HALVES; ++half) acc[i][half] = sum[i][half];
}

// The tile for `rows` x `cols` valid elements (rows <= kMR, cols <= kNR).
void run_tile(const Word* a_panel, const std::uint16_t* b_panel, std::int64_t pairs, std::int64_t rows,
              std::int64_t cols, __m512 (&acc)[kMR][2]) {
  using Tile = void (*)(const Word*, const std::uint16_t*, std::int64_t, __m512(&)[kMR][2]);
  static constexpr Tile kTiles[3][2] = {{tile<4, 1>, tile<4, 2>}, {tile<8, 1>, tile<8, 2>}, {tile<12, 1>, tile<12, 2>}};
  static_assert(kMR == 12 && kNR == 32, "kTiles covers 4, 8 and 12 rows of 16 and 32 columns");
  kTiles[(rows + 3) / 4 - 1][cols > 16 ? 1 : 0](a_panel, b_panel, pairs, acc);
}

// ---- AMX tiles: core/cpu/gemm_bf16_amx.cpp packs A for them and runs a 32 x 32 block ----

// The valid part of a 32 x 32 block through the epilogue: rows 0-15 from C tiles 0 and 1,
// rows 16-31 from tiles 2 and 3.
void store_amx_block(const float (&out)[4][16][16], std::int64_t row0, std::int64_t rows, std::int64_t col0,
                     std::int64_t cols, const Epilogue& e) {
  if (bf16_epilogue::is_whole_block(rows, cols, e)) {
    bf16_epilogue::store_whole_block_rows(out, row0, col0, e, 0, kBlockRows);
    return;
  }
  for (int half = 0; half < 2 && half * 16 < rows; ++half) {
    __m512 acc[16][2];
    for (int i = 0; i < 16; ++i) {
      acc[i][0] = _mm512_loadu_ps(out[2 * half][i]);
      acc[i][1] = _mm512_loadu_ps(out[2 * half + 1][i]);
    }
    store_tile<16>(acc, row0 + half * 16, std::min<std::int64_t>(16, rows - half * 16), col0, cols, e);
  }
}

// A 64-byte-aligned buffer kept between calls by the calling thread (the pool's threads only
// read and write through its pointer): a fresh multi-MiB buffer per call would page-fault.
struct PackBuffer {
  std::uint16_t* data = nullptr;
  std::int64_t capacity = 0;  // in uint16_t
  ~PackBuffer() { ::operator delete[](data, std::align_val_t{64}); }
  std::uint16_t* ensure(std::int64_t count) {
    if (capacity < count) {
      ::operator delete[](data, std::align_val_t{64});
      data = nullptr;
      data = static_cast<std::uint16_t*>(
          ::operator new[](static_cast<std::size_t>(count) * sizeof(std::uint16_t), std::align_val_t{64}));
      capacity = count;
    }
    return data;
  }
};

// `prepacked_b`: B already in the packed layout (bfloat16_panel_layout), or null to pack b;
// `prepacked_a`: A's vdpbf16ps panels (pack_bfloat16_a; not on AMX), or null to pack a.
void gemm_one_batch_entry(const Matrix16& a, const Matrix16& b, const Epilogue& e, std::int64_t m, std::int64_t n,
                          std::int64_t k, int threads, bool amx, const std::uint16_t* prepacked_b = nullptr,
                          const Word* prepacked_a = nullptr) {
  // On AMX, A's panels are 32-row blocks.
  const std::int64_t pairs = packed_pairs(k, amx);
  const std::int64_t rows_per_panel = amx ? kBlockRows : kMR;
  const std::int64_t row_panels = (m + rows_per_panel - 1) / rows_per_panel, col_panels = (n + kNR - 1) / kNR;
  const std::int64_t a_panel_words = pairs * rows_per_panel, b_panel_halves = pairs * 2 * kNR;
  const bf16_schedule::Shape shape = bf16_schedule::plan(row_panels, col_panels, a_panel_words * 4,
                                                         b_panel_halves * 2, prepacked_b == nullptr, threads);
  // The shared operand, where every thread packs it for itself, has a copy per thread.
  const std::int64_t a_copies = prepacked_a ? 0 : shape.shared_per_thread && !shape.own_rows ? threads : 1;
  const std::int64_t b_copies = prepacked_b ? 0 : shape.shared_per_thread && shape.own_rows ? threads : 1;
  const std::int64_t a_copy_words = row_panels * a_panel_words, b_copy_halves = col_panels * b_panel_halves;
  thread_local PackBuffer buffer;
  std::uint16_t* packed = buffer.ensure(a_copies * a_copy_words * 2 + b_copies * b_copy_halves);
  Word* packed_a_copies = reinterpret_cast<Word*>(packed);  // NOLINT: 32-bit words of pairs
  std::uint16_t* packing_b = packed + a_copies * a_copy_words * 2;
  // On AMX, whole 32-row blocks of an A whose rows tiles can load as they are are not packed.
  const bool a_direct = amx && bf16_amx::reads_a_directly(a, k);
  const std::int64_t direct_blocks = a_direct ? m / kBlockRows : 0;
  const auto pack_a = [&](std::int64_t r, std::int64_t copy) {
    if (r < direct_blocks || prepacked_a) return;
    Word* packed_a = packed_a_copies + copy * a_copy_words;
    const std::int64_t row0 = r * rows_per_panel, rows = std::min(rows_per_panel, m - row0);
    if (amx) bf16_amx::pack_a_block(a, row0, rows, k, pairs, reinterpret_cast<std::uint16_t*>(packed_a + r * a_panel_words));  // NOLINT: bits
    else pack_a_panel(a, row0, rows, k, packed_a + r * a_panel_words);
  };
  const auto pack_b = [&](std::int64_t q, std::int64_t copy) {
    std::uint16_t* panel_out = packing_b + copy * b_copy_halves + q * b_panel_halves;
    pack_b_panel(b, q * kNR, std::min<std::int64_t>(kNR, n - q * kNR), k, panel_out);
    // The pair rows past k up to whole tiles (AMX only; none otherwise) are zeros.
    const std::int64_t packed_halves = (k + 1) / 2 * 2 * kNR;
    std::fill(panel_out + packed_halves, panel_out + b_panel_halves, std::uint16_t{0});
  };
  const auto a_copy_of = [&](std::int64_t copy) -> const Word* {
    return prepacked_a ? prepacked_a : packed_a_copies + copy * a_copy_words;
  };
  const auto b_copy = [&](std::int64_t copy) -> const std::uint16_t* {
    return prepacked_b ? prepacked_b : packing_b + copy * b_copy_halves;
  };
  // The column panels of unit u, and its rows: bf16_schedule::run.
  const auto for_each_panel_pair = [&](std::int64_t unit, const auto& body) {
    const std::int64_t r = unit % row_panels, first_q = unit / row_panels * shape.group;
    for (std::int64_t q = first_q; q < std::min(col_panels, first_q + shape.group); ++q) body(r, q);
  };
  if (amx) {
    bf16_schedule::run(shape, threads, pack_a, pack_b, [&](const auto& next_unit, std::int64_t a_copy, std::int64_t b_copy_index) {
      const Word* packed_a = packed_a_copies + a_copy * a_copy_words;
      const std::uint16_t* packed_b = b_copy(b_copy_index);
      bf16_amx::configure_tiles();  // tile state is per thread: configured here, released before it leaves
      // Two buffers of C tiles: each block's epilogue runs while the next block's tile products
      // do (with k = 128, a block is four steps, and the epilogue took as long as they did).
      alignas(64) float out[2][4][16][16];
      struct Pending {
        std::int64_t r = -1, q = 0;
        int buffer = 0;
      } pending;
      const auto rows_of = [&](const Pending& p) { return std::min<std::int64_t>(kBlockRows, m - p.r * kBlockRows); };
      const auto cols_of = [&](const Pending& p) { return std::min<std::int64_t>(kNR, n - p.q * kNR); };
      const auto finish = [&](const Pending& p) {
        store_amx_block(out[p.buffer], p.r * kBlockRows, rows_of(p), p.q * kNR, cols_of(p), e);
      };
      // Where A is larger than half an L2 (so its blocks come from L3), while a unit runs the A
      // block of the next row panel (this thread's next unit, unless another thread takes it)
      // is asked into L2, spread over the unit's steps; the unit's first block would otherwise
      // wait on L3 for its A. (Where A stays in L2 the prefetches only cost: the MLP's products.)
      const auto a_block = [&](std::int64_t r) {
        return r < direct_blocks ? bf16_amx::direct_a_block(a, r * kBlockRows)
                                 : bf16_amx::packed_a_block(reinterpret_cast<const std::uint16_t*>(  // NOLINT: bits
                                       packed_a + r * a_panel_words));
      };
      const std::int64_t a_block_bytes = a_direct ? kBlockRows * a.row_stride * 2 : a_panel_words * 4;
      const std::int64_t unit_steps = shape.group * (pairs / kAmxTilePairs);
      const std::int64_t lines_per_step = row_panels * a_block_bytes > kAStaysInL2Bytes
                                              ? (a_block_bytes / 64 + unit_steps - 1) / unit_steps
                                              : 0;
      for (std::int64_t unit; (unit = next_unit()) >= 0;) {
        const char* next_a = reinterpret_cast<const char*>(a_block((unit + 1) % row_panels).data);  // NOLINT
        bf16_amx::L2Prefetch prefetch{next_a, next_a + a_block_bytes, lines_per_step};
        for_each_panel_pair(unit, [&](std::int64_t r, std::int64_t q) {
          // The previous block's epilogue: run_block applies it between this block's tile
          // products where it is a whole block, the general epilogue runs after them otherwise.
          const bool interleave =
              pending.r >= 0 && bf16_epilogue::is_whole_block(rows_of(pending), cols_of(pending), e);
          const bf16_amx::PendingBlock whole{&out[pending.buffer], pending.r * kBlockRows, pending.q * kNR, &e};
          bf16_amx::run_block(a_block(r), packed_b + q * b_panel_halves, pairs, prefetch, interleave ? &whole : nullptr);
          if (pending.r >= 0 && !interleave) finish(pending);
          const int buffer = pending.r >= 0 ? 1 - pending.buffer : 0;
          bf16_amx::store_block(out[buffer]);
          pending = {r, q, buffer};
        });
      }
      if (pending.r >= 0) finish(pending);
      bf16_amx::release_tiles();
    });
    return;
  }
  bf16_schedule::run(shape, threads, pack_a, pack_b, [&](const auto& next_unit, std::int64_t a_copy, std::int64_t b_copy_index) {
    const Word* packed_a = a_copy_of(a_copy);
    const std::uint16_t* packed_b = b_copy(b_copy_index);
    __m512 acc[kMR][2];
    for (std::int64_t unit; (unit = next_unit()) >= 0;) {
      for_each_panel_pair(unit, [&](std::int64_t r, std::int64_t q) {
        const std::int64_t rows = std::min<std::int64_t>(kMR, m - r * kMR), cols = std::min<std::int64_t>(kNR, n - q * kNR);
        run_tile(packed_a + r * a_panel_words, packed_b + q * b_panel_halves, pairs, rows, cols, acc);
        if (cols == kNR && e.c_col_stride == 1) {  // whole 32-column rows of a row-major C
          const auto row_sums = [&](int i) { return bf16_epilogue::RowSums{acc[i][0], acc[i][1]}; };
          bf16_epilogue::store_whole_rows(row_sums, r * kMR, q * kNR, e, 0, static_cast<int>(rows));
        } else {
          store_tile<kMR>(acc, r * kMR, rows, q * kNR, cols, e);
        }
      });
    }
  });
}

EMBER_AVX512_INTRINSICS_END

void run_bfloat16_gemm(const GemmPlan& plan, bool float32_c) {
  if (plan.batch == 0 || plan.m == 0 || plan.n == 0) return;
  const bool amx = amx_bfloat16_usable();
  const std::int64_t work = plan.m * plan.n * std::max<std::int64_t>(plan.k, 1);
  const int threads = work >= kParallelMinWork ? get_num_threads() : 1;
  const auto* a = static_cast<const std::uint16_t*>(plan.a);
  const auto* b = static_cast<const std::uint16_t*>(plan.b);
  auto* c = static_cast<std::uint16_t*>(plan.c);
  for (std::int64_t batch = 0; batch < plan.batch; ++batch) {
    Epilogue e{static_cast<float>(plan.alpha), static_cast<float>(plan.beta), plan.beta != 0.0,
               c + batch * plan.batch_stride_c, plan.row_stride_c, plan.col_stride_c};
    if (float32_c) e.c_float32 = static_cast<float*>(plan.c) + batch * plan.batch_stride_c;
    gemm_one_batch_entry({a + batch * plan.batch_stride_a, plan.row_stride_a, plan.col_stride_a},
                         {b + batch * plan.batch_stride_b, plan.row_stride_b, plan.col_stride_b}, e, plan.m, plan.n,
                         plan.k, threads, amx);
  }
}

}  // namespace

std::int64_t bfloat16_packed_a_halves(std::int64_t m, std::int64_t k) {
  return (m + kMR - 1) / kMR * packed_pairs(k, false) * kMR * 2;
}

void pack_bfloat16_a(const GemmPlan& plan, std::uint16_t* packed_a) {
  const Matrix16 a{static_cast<const std::uint16_t*>(plan.a), plan.row_stride_a, plan.col_stride_a};
  const std::int64_t panel_words = packed_pairs(plan.k, false) * kMR;
  auto* words = reinterpret_cast<Word*>(packed_a);  // NOLINT: 32-bit words of pairs
  for (std::int64_t r = 0; r * kMR < plan.m; ++r)
    pack_a_panel(a, r * kMR, std::min<std::int64_t>(kMR, plan.m - r * kMR), plan.k, words + r * panel_words);
}

void gemm_bfloat16_packed_b_avx512(const GemmPlan& plan, const BFloat16PanelLayout& layout,
                                   const std::uint16_t* packed_b, bool float32_c, const std::uint16_t* packed_a) {
  EMBER_CHECK(packed_a == nullptr || !layout.amx, ValueError,
              "gemm_bfloat16_packed_b_avx512: a packed A is vdpbf16ps panels, and this layout is AMX's");
  if (plan.m == 0 || plan.n == 0) return;
  const std::int64_t work = plan.m * plan.n * std::max<std::int64_t>(plan.k, 1);
  const int threads = work >= kParallelMinWork ? get_num_threads() : 1;
  const Epilogue e{static_cast<float>(plan.alpha), static_cast<float>(plan.beta), plan.beta != 0.0,
                   static_cast<std::uint16_t*>(plan.c), plan.row_stride_c, plan.col_stride_c,
                   float32_c ? static_cast<float*>(plan.c) : nullptr};
  gemm_one_batch_entry({static_cast<const std::uint16_t*>(plan.a), plan.row_stride_a, plan.col_stride_a},
                       {nullptr, 0, 0}, e, plan.m, plan.n, plan.k, threads, layout.amx, packed_b,
                       reinterpret_cast<const Word*>(packed_a));  // NOLINT: 32-bit words of pairs
}

void gemm_bfloat16_avx512(const GemmPlan& plan) { run_bfloat16_gemm(plan, false); }
void gemm_bfloat16_to_float32_avx512(const GemmPlan& plan) { run_bfloat16_gemm(plan, true); }

}  // namespace ember::cpu
