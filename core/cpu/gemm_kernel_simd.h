// core/cpu/gemm_kernel_simd.h — the register-tile GEMM kernel shared by the SIMD files.
//
// Tutorial §2.4 (matrix multiplication). Included only by gemm_kernel_avx512.cpp and
// gemm_kernel_avx2.cpp, each compiled with its own instruction-set flags; each passes an
// `Ops` struct (vector type, lane count, load/store/broadcast/fma intrinsics) declared in
// its own anonymous namespace, so every instantiation below is private to one translation
// unit and an AVX-512 copy can never be linked into a path that runs on an AVX2-only CPU.
// The contract (TileArgs, what may be read and written) is in core/cpu/gemm_kernels.h.
//
// Strategy of one tile (ROWS x COLS vectors of C in registers):
//   for each k step p:
//     load COLS vectors of B (row p of the B panel)
//     for each row i: broadcast A(i, p) from memory and FMA it into the row's COLS accumulators
// ROWS * COLS independent FMA chains hide the FMA latency; the broadcasts are plain loads
// (no shuffle port), so A may be packed, column-major or row-major at no cost. The tile's
// shape is a template argument: the full MR x NR tile for the interior and smaller
// instantiations for the edges, so edge tiles run the same code, only shorter, and no
// scratch tile or padding of C is ever needed. The last vector column is stored partially
// (a masked store) when the tile ends inside it.
//
// Where the vector is wider than the tail it holds (an Ops with `kHalfTail`: AVX-512), a last
// vector column of at most half a vector (a layer 20 wide: 16 + 4) runs its FMAs at half width
// (HALF_TAIL): a core that executes a 512-bit FMA as two 256-bit halves (AMD Zen 4) then
// spends one half, not two, on lanes that are mostly padding. Same lanes, same order over k,
// so the same bits; the upper lanes stay zero and are never stored.
#pragma once

#include <immintrin.h>

#include <array>
#include <cstdint>
#include <type_traits>
#include <utility>

#include <ember/core/cpu/gemm_kernels.h>

namespace ember::cpu::simd {
namespace {  // NOLINT: deliberately private to each including translation unit (see above)

// How far ahead (in k steps) the kernel asks for B. A B panel streams from L2 once per
// tile; 8 steps (1 KiB of a 32-float panel) covers L2 latency at the kernel's speed.
constexpr int kPrefetchSteps = 8;
// The C tile is prefetched at the start of a tile whose k loop is at least this long.
constexpr int kPrefetchCMinK = 32;

// The vector type of a tile's last column: the half-width one in a HALF_TAIL tile.
template <class Ops, bool HALF_TAIL>
struct LastColumn {
  using V = typename Ops::V;
};
template <class Ops>
struct LastColumn<Ops, true> {
  using V = typename Ops::HalfV;
};

// One tile: B panel at `b_panel`, C tile at `c_tile`, everything else from `t`.
template <class Ops, int ROWS, int COLS, bool A_ROWS, bool HALF_TAIL>
[[gnu::always_inline]] inline void one_tile(const TileArgs<typename Ops::T>& t, const typename Ops::T* b_panel,
                                            typename Ops::T* c_tile) {
  using T = typename Ops::T;
  using V = typename Ops::V;
  constexpr int L = Ops::kLanes;
  V acc[ROWS][COLS];
#pragma GCC unroll 16
  for (int i = 0; i < ROWS; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < COLS; ++j) acc[i][j] = Ops::zero();
  // A HALF_TAIL tile sums its last column in half-width registers of their own (narrowing a
  // full vector for each FMA and widening it back made the compiler copy registers around
  // every FMA), and widens them into acc once, after the k loop. kFull columns are full width.
  using HalfV = typename LastColumn<Ops, HALF_TAIL>::V;
  constexpr int kFull = HALF_TAIL ? COLS - 1 : COLS;
  HalfV half_acc[ROWS];
  if constexpr (HALF_TAIL) {
#pragma GCC unroll 16
    for (int i = 0; i < ROWS; ++i) half_acc[i] = Ops::half_zero();
  }

  // Ask for the C tile now: it is needed only at the end, and its lines then arrive for free
  // (a short k loop would not hide the wait, and the prefetches would only add work).
  if (t.k >= kPrefetchCMinK) {
#pragma GCC unroll 16
    for (int i = 0; i < ROWS; ++i) {
      _mm_prefetch(reinterpret_cast<const char*>(c_tile + i * t.c_row_stride), _MM_HINT_T0);
      if constexpr (COLS * L * sizeof(T) > 64)
        _mm_prefetch(reinterpret_cast<const char*>(c_tile + i * t.c_row_stride + COLS * L - 1), _MM_HINT_T0);
    }
  }

  // Each k step loads COLS vectors of B (and asks for the ones kPrefetchSteps ahead), then
  // broadcasts ROWS values of A, each into COLS FMAs. In a short k loop most of those
  // prefetches would point past the panel's last row and only evict useful lines
  // (measured: 5 % of the k = 10 product), so they are made only when k is long enough
  // for most of them to land inside the panel. The choice is a template argument of the k
  // loop (`prefetch`), made once per tile: a test inside the loop cost 7 % at k = 10.
  // A B panel read in place whose last vector ends inside the matrix (t.b_partial: a
  // narrow product's only panel) loads that vector with a mask rather than being copied
  // aside first; the masked-off lanes read as zeros and are never stored.
  const T* b = b_panel;
  const std::int64_t b_step = t.b_k_step;
  const int tail = static_cast<int>(t.cols - (COLS - 1) * L);  // lanes used in the last vector, 1..L
  auto k_loop = [&](auto prefetch, auto partial_b) {
    // bv: the full-width columns of B's row; bh: the last one, in a HALF_TAIL tile.
    auto load_b = [&](V (&bv)[COLS], HalfV& bh) {
#pragma GCC unroll 4
      for (int j = 0; j < kFull; ++j)
        bv[j] = decltype(partial_b)::value && j == COLS - 1 ? Ops::load_partial(b + j * L, tail) : Ops::load(b + j * L);
      if constexpr (HALF_TAIL)
        bh = decltype(partial_b)::value ? Ops::half_load_partial(b + kFull * L, tail) : Ops::half_load(b + kFull * L);
      if constexpr (prefetch) {
        const T* ahead = b + kPrefetchSteps * b_step;
        _mm_prefetch(reinterpret_cast<const char*>(ahead), _MM_HINT_T0);
        if constexpr (COLS * L * sizeof(T) > 64)
          _mm_prefetch(reinterpret_cast<const char*>(ahead + 64 / sizeof(T)), _MM_HINT_T0);
      }
      b += b_step;
    };
    // One k step of row i: A(i, p) (at `a_value`) broadcast, into every column's accumulator.
    // A tile of only the half column broadcasts at half width too.
    auto fma_row = [&](int i, const T* a_value, const V (&bv)[COLS], HalfV bh) {
      if constexpr (kFull == 0) {
        half_acc[i] = Ops::half_fma(Ops::half_broadcast(a_value), bh, half_acc[i]);
      } else {
        const V av = Ops::broadcast(a_value);
#pragma GCC unroll 4
        for (int j = 0; j < kFull; ++j) acc[i][j] = Ops::fma(av, bv[j], acc[i][j]);
        if constexpr (HALF_TAIL) half_acc[i] = Ops::half_fma(Ops::lower_half(av), bh, half_acc[i]);
      }
    };

    if constexpr (A_ROWS) {
      // Row-major A: A(i, p) = a[i * a_row_step + p]. Twelve row pointers do not fit in the
      // general registers next to the rest (the compiler kept them on the stack and reloaded
      // them every k step). Instead two base pointers, rows 0-5 and 6-11, both advancing by one
      // element, and the row offsets 1, 3 and 5 strides: x86 addressing scales them by 1, 2, 4
      // or 8 for free, so every row is base + offset * scale (0, s1, 2 s1, s3, 4 s1, s5).
      // Measured with the unrolling below: 5 % off the k = 10 product (docs/performance.md).
      static_assert(ROWS <= 12, "two bases of six rows each");
      const std::int64_t s1 = t.a_row_step, s3 = 3 * s1, s5 = 5 * s1;
      const T* base_low = t.a;
      const T* base_high = t.a + 6 * s1;
      auto row_value = [&](int i) -> const T* {
        const T* base = i < 6 ? base_low : base_high;
        switch (i % 6) {
          case 0: return base;
          case 1: return base + s1;
          case 2: return base + 2 * s1;
          case 3: return base + s3;
          case 4: return base + 4 * s1;
          default: return base + s5;
        }
      };
#pragma GCC unroll 4
      for (std::int64_t p = 0; p < t.k; ++p) {
        V bv[COLS];
        HalfV bh;
        load_b(bv, bh);
#pragma GCC unroll 16
        for (int i = 0; i < ROWS; ++i) fma_row(i, row_value(i), bv, bh);
        ++base_low;
        ++base_high;
      }
    } else {
      // Packed or column-major A: the ROWS values of one k step are adjacent.
      const T* column = t.a;
      const std::int64_t a_step = t.a_k_step;
#pragma GCC unroll 4
      for (std::int64_t p = 0; p < t.k; ++p) {
        V bv[COLS];
        HalfV bh;
        load_b(bv, bh);
#pragma GCC unroll 16
        for (int i = 0; i < ROWS; ++i) fma_row(i, column + i, bv, bh);
        column += a_step;
      }
    }
  };
  const bool prefetch = t.k > 2 * kPrefetchSteps;
  if (t.b_partial) prefetch ? k_loop(std::true_type{}, std::true_type{}) : k_loop(std::false_type{}, std::true_type{});
  else prefetch ? k_loop(std::true_type{}, std::false_type{}) : k_loop(std::false_type{}, std::false_type{});
  if constexpr (HALF_TAIL) {
#pragma GCC unroll 16
    for (int i = 0; i < ROWS; ++i) acc[i][COLS - 1] = Ops::widen(half_acc[i]);
  }

  // C = alpha * acc (+ beta * C). beta == 0 must not read C (it may hold NaNs), hence the
  // flag. The flags and strides are copied to locals first: the masked stores below may
  // alias anything as far as the compiler knows, and would force re-reading `t` per row.
  T* const c = c_tile;
  const std::int64_t c_stride = t.c_row_stride;
  const V alpha = Ops::splat(t.alpha), beta = Ops::splat(t.beta);
  auto store = [&](auto read_c, auto scale, auto full) {
#pragma GCC unroll 16
    for (int i = 0; i < ROWS; ++i) {
      T* row = c + i * c_stride;
#pragma GCC unroll 4
      for (int j = 0; j < COLS; ++j) {
        const bool whole = full || j < COLS - 1;
        V value = scale ? Ops::mul(alpha, acc[i][j]) : acc[i][j];  // alpha == 1 skips the multiply
        if (read_c) value = Ops::fma(beta, whole ? Ops::load(row + j * L) : Ops::load_partial(row + j * L, tail), value);
        if (whole) Ops::store(row + j * L, value);
        else Ops::store_partial(row + j * L, value, tail);
      }
    }
  };
  // A tile that ends inside a vector, over C's rows packed closer than the tile is wide, when
  // beta reads C (addmm's bias under a narrow layer: the toy MLP's 20 and 30 outputs, a
  // classifier's 2 or 10 logits): row i's masked store spans bytes of row i + 1, and a load
  // that overlaps a masked store — even only in its masked-off lanes — cannot take its data
  // from the store, so it waits until the store reaches the cache (about 30 cycles a row,
  // measured; docs/performance.md). So each row's C is read before the row above it is
  // stored: with one vector a row (rows can be a few floats apart) every row of the tile is
  // read first; with more, the next row is read before this one is stored (rows are then at
  // least a vector apart, so two rows up is never in the way).
  if (t.read_c && tail < L && c_stride < COLS * L) {
    auto old_row = [&](int i, V (&old)[COLS]) {
#pragma GCC unroll 4
      for (int j = 0; j < COLS; ++j)
        old[j] = j < COLS - 1 ? Ops::load(c + i * c_stride + j * L) : Ops::load_partial(c + i * c_stride + j * L, tail);
    };
    auto store_row = [&](int i, const V (&old)[COLS]) {
#pragma GCC unroll 4
      for (int j = 0; j < COLS; ++j) {
        const V value = Ops::fma(beta, old[j], t.alpha != T(1) ? Ops::mul(alpha, acc[i][j]) : acc[i][j]);
        if (j < COLS - 1) Ops::store(c + i * c_stride + j * L, value);
        else Ops::store_partial(c + i * c_stride + j * L, value, tail);
      }
    };
    if constexpr (COLS == 1) {
      V old[ROWS][1];
#pragma GCC unroll 16
      for (int i = 0; i < ROWS; ++i) old_row(i, old[i]);
#pragma GCC unroll 16
      for (int i = 0; i < ROWS; ++i) store_row(i, old[i]);
    } else {
      V old[COLS], next[COLS];
      old_row(0, old);
#pragma GCC unroll 16
      for (int i = 0; i < ROWS; ++i) {
        if (i + 1 < ROWS) old_row(i + 1, next);
        store_row(i, old);
        if (i + 1 < ROWS)
#pragma GCC unroll 4
          for (int j = 0; j < COLS; ++j) old[j] = next[j];
      }
    }
    return;
  }
  using Yes = std::true_type;
  using No = std::false_type;
  const bool scale = t.alpha != T(1);
  if (tail == L) {
    if (t.read_c) scale ? store(Yes{}, Yes{}, Yes{}) : store(Yes{}, No{}, Yes{});
    else scale ? store(No{}, Yes{}, Yes{}) : store(No{}, No{}, Yes{});
  } else {
    if (t.read_c) scale ? store(Yes{}, Yes{}, No{}) : store(Yes{}, No{}, No{});
    else scale ? store(No{}, Yes{}, No{}) : store(No{}, No{}, No{});
  }
}

// The kernel entry: `t.panels` tiles side by side along C's rows, so that the call and the
// set-up are paid once per row of tiles (5 % of the k = 10 product, where a tile is short).
// (A row of several tiles has whole vectors only, so HALF_TAIL tiles come one at a time.)
template <class Ops, int ROWS, int COLS, bool A_ROWS, bool HALF_TAIL>
void tile_kernel(const TileArgs<typename Ops::T>& t) {
  constexpr std::int64_t kWidth = COLS * Ops::kLanes;
  const typename Ops::T* b = t.b;
  typename Ops::T* c = t.c;
  for (std::int64_t panel = 0; panel < t.panels; ++panel, b += t.b_panel_step, c += kWidth)
    one_tile<Ops, ROWS, COLS, A_ROWS, HALF_TAIL>(t, b, c);
}

// Every tile shape from 1 x 1 vector up to MR x COLS_MAX vectors, indexed [vectors - 1][rows - 1].
template <class Ops, int COLS, bool A_ROWS, bool HALF_TAIL, int... R>
constexpr std::array<TileFn<typename Ops::T>, sizeof...(R)> row_table(std::integer_sequence<int, R...>) {
  return {&tile_kernel<Ops, R + 1, COLS, A_ROWS, HALF_TAIL>...};
}

template <class Ops, int MR, int COLS_MAX, bool A_ROWS, bool HALF_TAIL, int... C>
constexpr std::array<std::array<TileFn<typename Ops::T>, MR>, COLS_MAX> tile_table(std::integer_sequence<int, C...>) {
  return {row_table<Ops, C + 1, A_ROWS, HALF_TAIL>(std::make_integer_sequence<int, MR>{})...};
}

// The entry point gemm.cpp calls: picks the instantiation for this tile's rows and columns,
// and for a last vector at most half used, the half-width one where the Ops has it.
template <class Ops, int MR, int COLS_MAX, bool A_ROWS>
void dispatch_tile(const TileArgs<typename Ops::T>& t) {
  static constexpr auto table =
      tile_table<Ops, MR, COLS_MAX, A_ROWS, false>(std::make_integer_sequence<int, COLS_MAX>{});
  const std::int64_t vectors = (t.cols + Ops::kLanes - 1) / Ops::kLanes;
  if constexpr (Ops::kHalfTail) {
    static constexpr auto half_table =
        tile_table<Ops, MR, COLS_MAX, A_ROWS, true>(std::make_integer_sequence<int, COLS_MAX>{});
    if (t.cols - (vectors - 1) * Ops::kLanes <= Ops::kLanes / 2) {
      half_table[vectors - 1][t.rows - 1](t);
      return;
    }
  }
  table[vectors - 1][t.rows - 1](t);
}

// The MicroKernel of one ISA and dtype: MR x COLS-vector tiles for both A layouts, with the
// blocking given. The including file adds its packing functions, if it has them.
template <class Ops, int MR, int COLS>
MicroKernel<typename Ops::T> make_kernel(const char* name, std::int64_t kc, std::int64_t nc) {
  MicroKernel<typename Ops::T> kernel;
  kernel.name = name;
  kernel.mr = MR;
  kernel.nr = COLS * Ops::kLanes;
  kernel.kc = kc;
  kernel.nc = nc;
  kernel.tile_a_kstep = &dispatch_tile<Ops, MR, COLS, false>;
  kernel.tile_a_rows = &dispatch_tile<Ops, MR, COLS, true>;
  kernel.reads_partial_b = true;
  return kernel;
}

}  // namespace
}  // namespace ember::cpu::simd
