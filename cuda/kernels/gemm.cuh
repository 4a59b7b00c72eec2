// cuda/kernels/gemm.cuh — batched strided GEMM, C = alpha · A·B + beta · C (fp32 / fp64).
//
// Strategy (the textbook tiling ladder, one rung per idea):
//   1. block tiling — a block owns a 64×64 tile of C and walks K in steps of 16. Each step
//      it stages a 64×16 slab of A and a 16×64 slab of B in shared memory, so every global
//      element is read once per block instead of once per output;
//   2. register tiling — the 256 threads form a 16×16 grid; thread (ty, tx) accumulates the
//      4×4 outputs at rows ty + 16i, cols tx + 16j in registers. Per K step it reads 4 A and
//      4 B values from shared memory and does 16 FMAs (4× the reuse of one output/thread);
//   3. vectorised loads — when an operand is contiguous along a tile axis and aligned, its
//      slab is fetched with 16-byte loads (4 floats / 2 doubles); otherwise element by element;
//   4. transposes cost nothing — operands are read through their (row, col) strides, so
//      A^T is just swapped strides; edges (any M, N, K) are zero-padded in shared memory;
//   5. any M and N — C's 64×64 tiles are numbered row-tile-major and laid on grid.x (CUDA
//      allows 2^31 − 1 blocks there, only 65535 on y and z); a block loops over tiles with
//      stride gridDim.x, and over batches with stride gridDim.z (gemm_launch_shape);
//   6. epilogue — C = alpha·acc + beta·addend while the tile is stored, the addend read from
//      C or, for addmm, straight from the broadcast bias (plan.bias, stride 0 along rows),
//      so the bias is never first copied into C.
//
//   tiles of C, numbered on grid.x:        block b handles tiles b, b + gridDim.x, ...
//        col tile → 0    1    2
//   row 0        [ 0 ][ 1 ][ 2 ]
//   tile 1       [ 3 ][ 4 ][ 5 ]           tile t = (row t / col_tiles, col t % col_tiles)
//   ↓ 2          [ 6 ][ 7 ][ 8 ]
//
//              K →                          N →
//         ┌──────────┐                 ┌──────────────┐
//      M  │ A slab   │ 64×16   ×    K  │  B slab 16×64│   →  C tile 64×64 (4×4 per thread)
//      ↓  └──────────┘                 └──────────────┘
// Bound: compute — 2·M·N·K FLOPs; the arithmetic intensity of a 64×64×16 step is
// 2·64·64·16 / ((64·16 + 16·64)·itemsize) = 16 FLOP/byte for fp32 from global memory.
// No tensor cores (they need TF32/FP16 paths) — cuBLAS is the yardstick (cuda_gemm.cu).
#pragma once

#include <cstdint>

#include <ember/core/error.h>
#include <ember/core/strided_index.h>
#include <ember/cuda/kernels/device_support.cuh>
#include <ember/cuda/kernels/elementwise.cuh>

EMBER_KERNELS_BEGIN

constexpr int kGemmTileM = 64, kGemmTileN = 64, kGemmTileK = 16;
constexpr int kGemmThreadsX = 16, kGemmThreadsY = 16;  // 256 threads
constexpr int kGemmThreads = kGemmThreadsX * kGemmThreadsY;
constexpr int kGemmPerThreadM = kGemmTileM / kGemmThreadsY;  // 4
constexpr int kGemmPerThreadN = kGemmTileN / kGemmThreadsX;  // 4
constexpr std::int64_t kGemmMaxGridX = 2147483647;  // CUDA's grid.x limit (2^31 − 1)
constexpr std::int64_t kGemmMaxGridZ = 65535;       // CUDA's grid.z limit

// How C splits into tiles, 64×64 unless told (host and device: the kernel recomputes it
// from the plan; gemm_fast.cuh asks for 128×128).
struct GemmTiles {
  std::int64_t row_tiles = 0, col_tiles = 0, tiles = 0;
};
EMBER_HOST_DEVICE inline GemmTiles gemm_tiles(std::int64_t m, std::int64_t n, std::int64_t tile_m = kGemmTileM,
                                              std::int64_t tile_n = kGemmTileN) {
  GemmTiles t;
  t.row_tiles = (m + tile_m - 1) / tile_m;
  t.col_tiles = (n + tile_n - 1) / tile_n;
  t.tiles = t.row_tiles * t.col_tiles;
  return t;
}
// The first row and column of C that tile number `tile` covers.
EMBER_HOST_DEVICE inline void gemm_tile_origin(std::int64_t tile, std::int64_t col_tiles, std::int64_t& row0,
                                               std::int64_t& col0) {
  row0 = (tile / col_tiles) * kGemmTileM;
  col0 = (tile % col_tiles) * kGemmTileN;
}

// The launch for a plan (host side; unit-tested on the CPU): one block per tile on grid.x
// up to max_blocks_x, one per batch on grid.z up to 65535; the kernel's loops cover the rest.
struct GemmLaunch {
  GemmTiles tiles;
  std::int64_t grid_x = 0, grid_z = 0;
};
inline GemmLaunch gemm_launch_shape(const GemmPlan& plan, std::int64_t max_blocks_x = kGemmMaxGridX) {
  GemmLaunch launch;
  launch.tiles = gemm_tiles(plan.m, plan.n);
  launch.grid_x = launch.tiles.tiles < max_blocks_x ? launch.tiles.tiles : max_blocks_x;
  launch.grid_z = plan.batch < kGemmMaxGridZ ? plan.batch : kGemmMaxGridZ;
  return launch;
}

// How an operand's slab may be fetched: 16-byte vectors along its columns (cs == 1), along
// its rows (rs == 1), or one element at a time.
enum class TileLoad : int { Scalar, VectorAlongCols, VectorAlongRows };

// Stages the ROWS×COLS slab starting at (row0, col0) of a rows×cols matrix with strides
// (rs, cs) into shared memory, element (r, c) at dst[r * dsr + c * dsc]; out-of-range
// elements become 0 so the multiply loop needs no edge checks.
template <class T, int ROWS, int COLS>
EMBER_DEVICE void load_tile(const T* src, std::int64_t rs, std::int64_t cs, std::int64_t row0, std::int64_t col0,
                            std::int64_t rows, std::int64_t cols, TileLoad mode, SharedPointer<T> dst, int dsr, int dsc) {
  constexpr int V = kVectorBytes / static_cast<int>(sizeof(T));
  const int thread = static_cast<int>(threadIdx.y * blockDim.x + threadIdx.x);
  if (mode == TileLoad::VectorAlongCols) {
    constexpr int per_row = COLS / V;
    for (int e = thread; e < ROWS * per_row; e += kGemmThreads) {
      const int r = e / per_row, c = (e % per_row) * V;
      const std::int64_t gr = row0 + r, gc = col0 + c;
      if (gr < rows && gc + V <= cols) {
        const Vector<T, V> v = load_aligned(reinterpret_cast<const Vector<T, V>*>(src + gr * rs + gc));
        for (int j = 0; j < V; ++j) dst[r * dsr + (c + j) * dsc] = v.lane[j];
      } else {
        for (int j = 0; j < V; ++j) dst[r * dsr + (c + j) * dsc] = (gr < rows && gc + j < cols) ? src[gr * rs + gc + j] : T(0);
      }
    }
  } else if (mode == TileLoad::VectorAlongRows) {
    constexpr int per_col = ROWS / V;
    for (int e = thread; e < COLS * per_col; e += kGemmThreads) {
      const int c = e / per_col, r = (e % per_col) * V;
      const std::int64_t gr = row0 + r, gc = col0 + c;
      if (gc < cols && gr + V <= rows) {
        const Vector<T, V> v = load_aligned(reinterpret_cast<const Vector<T, V>*>(src + gr + gc * cs));
        for (int j = 0; j < V; ++j) dst[(r + j) * dsr + c * dsc] = v.lane[j];
      } else {
        for (int j = 0; j < V; ++j) dst[(r + j) * dsr + c * dsc] = (gc < cols && gr + j < rows) ? src[gr + j + gc * cs] : T(0);
      }
    }
  } else {
    for (int e = thread; e < ROWS * COLS; e += kGemmThreads) {
      const int r = e / COLS, c = e % COLS;
      const std::int64_t gr = row0 + r, gc = col0 + c;
      dst[r * dsr + c * dsc] = (gr < rows && gc < cols) ? src[gr * rs + gc * cs] : T(0);
    }
  }
}

template <class T>
EMBER_GLOBAL void gemm_kernel(GemmPlan plan, TileLoad a_mode, TileLoad b_mode) {
  // A slab stored k-major (As[kk][m]) and B slab k-major (Bs[kk][n]): in the multiply loop
  // a warp reads one As value (broadcast) and 16 consecutive Bs values (no bank conflicts).
  EMBER_SHARED_ARRAY(T, a_tile, kGemmTileK * kGemmTileM);
  EMBER_SHARED_ARRAY(T, b_tile, kGemmTileK * kGemmTileN);
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  const T alpha = static_cast<T>(plan.alpha), beta = static_cast<T>(plan.beta);
  const GemmTiles tiles = gemm_tiles(plan.m, plan.n);

  // Both loops are uniform across the block (they depend on block indices only), so the
  // barriers inside are reached by every thread.
  for (std::int64_t batch = blockIdx.z; batch < plan.batch; batch += gridDim.z)
  for (std::int64_t tile = blockIdx.x; tile < tiles.tiles; tile += gridDim.x) {
    std::int64_t m0 = 0, n0 = 0;
    gemm_tile_origin(tile, tiles.col_tiles, m0, n0);
    const T* a = static_cast<const T*>(plan.a) + batch * plan.batch_stride_a;
    const T* b = static_cast<const T*>(plan.b) + batch * plan.batch_stride_b;
    T* c = static_cast<T*>(plan.c) + batch * plan.batch_stride_c;
    const T* bias = plan.bias == nullptr ? nullptr : static_cast<const T*>(plan.bias) + batch * plan.batch_stride_bias;

    T acc[kGemmPerThreadM][kGemmPerThreadN] = {};
    for (std::int64_t k0 = 0; k0 < plan.k; k0 += kGemmTileK) {
      load_tile<T, kGemmTileM, kGemmTileK>(a, plan.row_stride_a, plan.col_stride_a, m0, k0, plan.m, plan.k, a_mode,
                                           a_tile, 1, kGemmTileM);
      load_tile<T, kGemmTileK, kGemmTileN>(b, plan.row_stride_b, plan.col_stride_b, k0, n0, plan.k, plan.n, b_mode,
                                           b_tile, kGemmTileN, 1);
      EMBER_SYNCTHREADS();  // slabs complete before anyone multiplies
      for (int kk = 0; kk < kGemmTileK; ++kk) {
        T a_frag[kGemmPerThreadM], b_frag[kGemmPerThreadN];
        for (int i = 0; i < kGemmPerThreadM; ++i) a_frag[i] = a_tile[kk * kGemmTileM + ty + kGemmThreadsY * i];
        for (int j = 0; j < kGemmPerThreadN; ++j) b_frag[j] = b_tile[kk * kGemmTileN + tx + kGemmThreadsX * j];
        for (int i = 0; i < kGemmPerThreadM; ++i)
          for (int j = 0; j < kGemmPerThreadN; ++j) acc[i][j] += a_frag[i] * b_frag[j];
      }
      EMBER_SYNCTHREADS();  // everyone done reading before the next slab overwrites
    }
    for (int i = 0; i < kGemmPerThreadM; ++i) {
      const std::int64_t row = m0 + ty + kGemmThreadsY * i;
      if (row >= plan.m) continue;
      for (int j = 0; j < kGemmPerThreadN; ++j) {
        const std::int64_t col = n0 + tx + kGemmThreadsX * j;
        if (col >= plan.n) continue;
        T* out = c + row * plan.row_stride_c + col * plan.col_stride_c;
        // beta == 0: C may be uninitialised (NaN garbage must not leak in), so never read it.
        if (beta == T(0)) {
          *out = alpha * acc[i][j];
        } else {
          const T addend = bias != nullptr ? bias[row * plan.row_stride_bias + col * plan.col_stride_bias] : *out;
          *out = alpha * acc[i][j] + beta * addend;
        }
      }
    }
  }
}

// Chooses the vector mode for one operand from its strides and alignment (host side). The
// vector path needs every batch's base and every row (or column) start 16-byte aligned.
template <class T>
inline TileLoad choose_tile_load(const void* base, std::int64_t batch_stride, std::int64_t rs, std::int64_t cs) {
  constexpr int V = kVectorBytes / static_cast<int>(sizeof(T));
  const bool base_aligned = reinterpret_cast<std::uintptr_t>(base) % kVectorBytes == 0 && batch_stride % V == 0;
  if (!base_aligned) return TileLoad::Scalar;
  if (cs == 1 && rs % V == 0) return TileLoad::VectorAlongCols;
  if (rs == 1 && cs % V == 0) return TileLoad::VectorAlongRows;
  return TileLoad::Scalar;
}

template <class T>
void launch_gemm_typed(const GemmPlan& plan, cudaStream_t stream, std::int64_t max_blocks_x) {
  const TileLoad a_mode = choose_tile_load<T>(plan.a, plan.batch_stride_a, plan.row_stride_a, plan.col_stride_a);
  const TileLoad b_mode = choose_tile_load<T>(plan.b, plan.batch_stride_b, plan.row_stride_b, plan.col_stride_b);
  const GemmLaunch shape = gemm_launch_shape(plan, max_blocks_x);
  const dim3 grid(static_cast<unsigned>(shape.grid_x), 1u, static_cast<unsigned>(shape.grid_z));
  auto kernel = &gemm_kernel<T>;
  EMBER_LAUNCH(kernel, grid, dim3(kGemmThreadsX, kGemmThreadsY), stream, plan, a_mode, b_mode);
}

// max_blocks_x only matters to tests, which lower it to make blocks loop over tiles.
inline void dispatch_gemm(const GemmPlan& plan, cudaStream_t stream, std::int64_t max_blocks_x = kGemmMaxGridX) {
  if (plan.batch == 0 || plan.m == 0 || plan.n == 0) return;
  EMBER_DISPATCH_FLOATING(plan.dtype, launch_gemm_typed<scalar_t>(plan, stream, max_blocks_x));
}

EMBER_KERNELS_END
