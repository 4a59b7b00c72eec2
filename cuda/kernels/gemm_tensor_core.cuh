// cuda/kernels/gemm_tensor_core.cuh — C = alpha · A·B + beta · C for bfloat16 and float16
// matrices on the tensor cores (mma.sync m16n8k16), float32 accumulation, C rounded once.
//
// Issue 22. The reading version of a tensor-core GEMM: gemm.cuh's tiling ladder with the
// inner product handed to the tensor cores (cuda/kernels/mma.cuh).
//   1. block tiling — a block of 128 threads (4 warps) owns a 64×64 tile of C and walks K
//      in steps of 16, one mma's depth. Each step stages a 64×16 slab of A (row by row) and
//      a 16×64 slab of B (column by column, k contiguous) in shared memory as 16-bit bits,
//      zero-padded past the matrix edges, read through the operands' strides (transposes cost
//      nothing);
//   2. warp tiling — warp w computes the 32×32 quarter (w / 2, w % 2) of the block tile as
//      2 × 4 mma tiles of 16×8, its accumulators (8 × 4 floats per lane) in registers;
//   3. fragments — each lane loads its pairs of A and B (mma.cuh's layout) from shared
//      memory with plain 16-bit loads and packs them into registers; one mma per tile and
//      k step;
//   4. epilogue — each lane owns 4 elements of every mma tile of C: alpha·acc + beta·addend
//      in float (the addend from C or the addmm bias), rounded once to the 16-bit format
//      with ember's rounding (core/reduced_float.h), the bits every backend gives.
// Bound: the tensor cores do a 64×64×16 step in 32 mma instructions; this version feeds
// them from shared memory with scalar loads and no double buffering, so it is bound by
// those loads, not by the tensor cores (the fast variant — ldmatrix, cp.async pipelining,
// and on sm_90 wgmma with TMA — is left to when a GPU can measure it; docs/mixed-precision.md).
#pragma once

#include <cstdint>
#include <type_traits>

#include <ember/core/reduced_float.h>
#include <ember/core/strided_index.h>
#include <ember/cuda/kernels/device_support.cuh>
#include <ember/cuda/kernels/gemm.cuh>
#include <ember/cuda/kernels/mma.cuh>

EMBER_KERNELS_BEGIN

constexpr int kTensorCoreThreads = 128;  // 4 warps
constexpr int kTensorCoreTileK = 16;     // one mma's k
constexpr int kWarpTilesM = 2, kWarpTilesN = 4;  // a warp's 32×32: 2 × 4 mma tiles of 16×8

// The 16-bit format's bits <-> float, with ember's rounding.
template <class T>
EMBER_HOST_DEVICE inline float float_of_bits(std::uint16_t bits) {
  if constexpr (std::is_same_v<T, BFloat16>) return reduced_float::float_from_bfloat16_bits(bits);
  else return reduced_float::float_from_float16_bits(bits);
}
template <class T>
EMBER_HOST_DEVICE inline std::uint16_t bits_of_float(float value) {
  if constexpr (std::is_same_v<T, BFloat16>) return reduced_float::bfloat16_bits_from_float(value);
  else return reduced_float::float16_bits_from_float(value);
}

// Stages the 64×16 slab of a rows×cols operand starting at (row0, col0) — A's rows and k, or
// B's k and columns read transposed — as bits in dst[r * 16 + kk], zeros outside the matrix.
// (rs, cs): the strides along the slab's 64 and its 16.
EMBER_DEVICE void stage_slab(const std::uint16_t* src, std::int64_t rs, std::int64_t cs, std::int64_t row0,
                             std::int64_t col0, std::int64_t rows, std::int64_t cols, SharedPointer<std::uint16_t> dst) {
  for (int e = static_cast<int>(threadIdx.x); e < kGemmTileM * kTensorCoreTileK; e += kTensorCoreThreads) {
    const int r = e / kTensorCoreTileK, kk = e % kTensorCoreTileK;
    const std::int64_t gr = row0 + r, gk = col0 + kk;
    dst[e] = (gr < rows && gk < cols) ? src[gr * rs + gk * cs] : std::uint16_t{0};
  }
}

template <class T>
EMBER_GLOBAL void gemm_tensor_core_kernel(GemmPlan plan) {
  EMBER_SHARED_ARRAY(std::uint16_t, a_slab, kGemmTileM * kTensorCoreTileK);  // [m][k]
  EMBER_SHARED_ARRAY(std::uint16_t, b_slab, kGemmTileN * kTensorCoreTileK);  // [n][k]
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int group = lane / 4, pair = lane % 4;  // mma.cuh's g and t
  const int warp_row = (warp / 2) * 32, warp_col = (warp % 2) * 32;
  const float alpha = static_cast<float>(plan.alpha), beta = static_cast<float>(plan.beta);
  const GemmTiles tiles = gemm_tiles(plan.m, plan.n);

  // Both loops are uniform across the block, so every thread reaches the barriers.
  for (std::int64_t batch = blockIdx.z; batch < plan.batch; batch += gridDim.z)
  for (std::int64_t tile = blockIdx.x; tile < tiles.tiles; tile += gridDim.x) {
    std::int64_t m0 = 0, n0 = 0;
    gemm_tile_origin(tile, tiles.col_tiles, m0, n0);
    const auto* a = static_cast<const std::uint16_t*>(plan.a) + batch * plan.batch_stride_a;
    const auto* b = static_cast<const std::uint16_t*>(plan.b) + batch * plan.batch_stride_b;
    auto* c = static_cast<std::uint16_t*>(plan.c) + batch * plan.batch_stride_c;
    const auto* bias =
        plan.bias == nullptr ? nullptr : static_cast<const std::uint16_t*>(plan.bias) + batch * plan.batch_stride_bias;

    float acc[kWarpTilesM][kWarpTilesN][4] = {};
    for (std::int64_t k0 = 0; k0 < plan.k; k0 += kTensorCoreTileK) {
      stage_slab(a, plan.row_stride_a, plan.col_stride_a, m0, k0, plan.m, plan.k, a_slab);
      // B's slab column by column: B(k, n) read as Bᵀ(n, k).
      stage_slab(b, plan.col_stride_b, plan.row_stride_b, n0, k0, plan.n, plan.k, b_slab);
      EMBER_SYNCTHREADS();  // slabs complete before any warp reads its fragments
      EMBER_UNROLL
      for (int i = 0; i < kWarpTilesM; ++i) {
        const int row = warp_row + i * 16 + group;  // and row + 8
        const std::uint32_t a_frag[4] = {
            pack_pair(a_slab[row * 16 + 2 * pair], a_slab[row * 16 + 2 * pair + 1]),
            pack_pair(a_slab[(row + 8) * 16 + 2 * pair], a_slab[(row + 8) * 16 + 2 * pair + 1]),
            pack_pair(a_slab[row * 16 + 2 * pair + 8], a_slab[row * 16 + 2 * pair + 9]),
            pack_pair(a_slab[(row + 8) * 16 + 2 * pair + 8], a_slab[(row + 8) * 16 + 2 * pair + 9])};
        EMBER_UNROLL
        for (int j = 0; j < kWarpTilesN; ++j) {
          const int col = warp_col + j * 8 + group;
          const std::uint32_t b_frag[2] = {pack_pair(b_slab[col * 16 + 2 * pair], b_slab[col * 16 + 2 * pair + 1]),
                                           pack_pair(b_slab[col * 16 + 2 * pair + 8], b_slab[col * 16 + 2 * pair + 9])};
          mma_m16n8k16<T>(acc[i][j], a_frag, b_frag, acc[i][j]);
        }
      }
      EMBER_SYNCTHREADS();  // every warp has read the slabs before the next step overwrites them
    }
    // This lane's elements of each mma tile: rows group and group + 8, columns 2·pair and
    // 2·pair + 1 (mma.cuh's C layout).
    EMBER_UNROLL
    for (int i = 0; i < kWarpTilesM; ++i) {
      EMBER_UNROLL
      for (int j = 0; j < kWarpTilesN; ++j) {
        EMBER_UNROLL
        for (int e = 0; e < 4; ++e) {
          const std::int64_t row = m0 + warp_row + i * 16 + group + (e / 2) * 8;
          const std::int64_t col = n0 + warp_col + j * 8 + 2 * pair + e % 2;
          if (row >= plan.m || col >= plan.n) continue;
          std::uint16_t* out = c + row * plan.row_stride_c + col * plan.col_stride_c;
          float value = alpha * acc[i][j][e];
          // beta == 0: C may be uninitialised (NaN garbage must not leak in), so never read it.
          if (beta != 0.0f) {
            const std::uint16_t addend =
                bias != nullptr ? bias[row * plan.row_stride_bias + col * plan.col_stride_bias] : *out;
            value += beta * float_of_bits<T>(addend);
          }
          *out = bits_of_float<T>(value);
        }
      }
    }
  }
}

// A bfloat16 or float16 plan on the tensor cores: 64×64 tiles of C on grid.x, batches on
// grid.z (gemm.cuh's launch shape). max_blocks_x only matters to tests.
inline void dispatch_gemm_tensor_core(const GemmPlan& plan, cudaStream_t stream,
                                      std::int64_t max_blocks_x = kGemmMaxGridX) {
  if (plan.batch == 0 || plan.m == 0 || plan.n == 0) return;
  const GemmLaunch shape = gemm_launch_shape(plan, max_blocks_x);
  const dim3 grid(static_cast<unsigned>(shape.grid_x), 1u, static_cast<unsigned>(shape.grid_z));
  if (plan.dtype == DType::BFloat16) {
    EMBER_LAUNCH(gemm_tensor_core_kernel<BFloat16>, grid, dim3(kTensorCoreThreads), stream, plan);
  } else {
    EMBER_LAUNCH(gemm_tensor_core_kernel<Half>, grid, dim3(kTensorCoreThreads), stream, plan);
  }
}

EMBER_KERNELS_END
