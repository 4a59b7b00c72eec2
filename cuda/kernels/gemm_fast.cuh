// cuda/kernels/gemm_fast.cuh — the float32 GEMM for large matrices: 128×128 tiles, 8×8
// outputs per thread, double-buffered slabs. A performance file: read gemm.cuh first (the
// same plan, strides, edges, batching and epilogue, one idea at a time); this one only says
// how to get more of the chip. The plan chooses it (gemm_uses_fast_kernel): float32 with
// enough 128×128 tiles to fill the GPU; everything else runs gemm.cuh's kernel.
//
// Strategy, next to gemm.cuh's 64×64 tile with 4×4 per thread:
//   1. bigger tiles — a block owns a 128×128 tile of C and walks K in slabs of 8; a slab is
//      128×8 of A and 8×128 of B: 2·128·128·8 FLOPs for 8 KiB read, twice gemm.cuh's
//      intensity from global memory (32 FLOP/byte);
//   2. 8×8 per thread — the 256 threads form a 16×16 grid; thread (ty, tx) holds rows
//      ty·4 + {0..3} and 64 + ty·4 + {0..3}, columns tx·4 + {0..3} and 64 + tx·4 + {0..3}:
//      per k it reads two 16-byte vectors of A and two of B from shared memory and does 64
//      FMAs (gemm.cuh: 8 scalar reads for 16 FMAs). The two halves 64 apart keep a warp's
//      vector reads on distinct banks (16 threads read 256 consecutive bytes of B);
//   3. double buffering — two copies of each slab in shared memory: while the threads
//      multiply slab s, the loads of slab s + 1 are already in flight into registers, and
//      are written to the other copy afterwards. One barrier per slab: the slab written in
//      step s was last read in step s − 1, which that barrier closed;
//   4. loads as gemm.cuh's — each thread fetches 4 elements of each slab: one 16-byte
//      vector along the contiguous axis (TileLoad), or 4 scalars for other strides; the
//      out-of-range part of an edge tile is zero.
// Bound: the FP32 FMA rate (about 67 TFLOP/s on an H200); the aim is most of cuBLAS's SGEMM.
// Registers: 64 accumulators + 16 fragment values + 8 staged loads, about 128 per thread,
// two blocks per SM. Shared memory: 2 × (8×128 + 8×128) floats = 16 KiB per block.
#pragma once

#include <cstdint>
#include <type_traits>

#include <ember/cuda/kernels/gemm.cuh>

EMBER_KERNELS_BEGIN

constexpr int kFastTileM = 128, kFastTileN = 128, kFastTileK = 8;
constexpr int kFastThreads = 256;                     // 16 × 16
constexpr int kFastSlabA = kFastTileM * kFastTileK;   // 1024 floats, stored k-major: [k][m]
constexpr int kFastSlabB = kFastTileK * kFastTileN;   // 1024 floats, stored [k][n]
constexpr int kFastPerThreadLoads = kFastSlabA / kFastThreads;  // 4 elements of each slab
// The fast kernel pays off once there are enough 128×128 tiles for every SM to get one:
// below that, gemm.cuh's 64×64 tiles spread the work over four times as many blocks.
// (An H200 has 132 SMs; a constant rather than the device's count keeps the choice, and
// so the rounding, the same on every GPU.)
constexpr std::int64_t kFastMinTiles = 128;

// Which element (r, c) of a ROWS×COLS slab lane j of thread t stages, for each load mode.
// Vector modes: the thread's 4 elements are one 16-byte vector along the contiguous axis.
template <int ROWS, int COLS>
EMBER_DEVICE void fast_slab_element(TileLoad mode, int t, int j, int& r, int& c) {
  if (mode == TileLoad::VectorAlongCols) {
    r = t / (COLS / 4);
    c = (t % (COLS / 4)) * 4 + j;
  } else if (mode == TileLoad::VectorAlongRows) {
    c = t / (ROWS / 4);
    r = (t % (ROWS / 4)) * 4 + j;
  } else {
    const int e = t + kFastThreads * j;
    r = e % ROWS;
    c = e / ROWS;
  }
}

// Fetches thread t's 4 elements of the slab at (row0, col0) into registers (0 outside).
template <int ROWS, int COLS>
EMBER_DEVICE void fetch_fast_slab(const float* src, std::int64_t rs, std::int64_t cs, std::int64_t row0,
                                  std::int64_t col0, std::int64_t rows, std::int64_t cols, TileLoad mode, int t,
                                  float (&staged)[kFastPerThreadLoads]) {
  int r = 0, c = 0;
  fast_slab_element<ROWS, COLS>(mode, t, 0, r, c);
  const std::int64_t gr = row0 + r, gc = col0 + c;
  if (mode == TileLoad::VectorAlongCols && gr < rows && gc + 4 <= cols) {
    const Vector<float, 4> v = load_aligned(reinterpret_cast<const Vector<float, 4>*>(src + gr * rs + gc));
    EMBER_UNROLL
    for (int j = 0; j < 4; ++j) staged[j] = v.lane[j];
    return;
  }
  if (mode == TileLoad::VectorAlongRows && gc < cols && gr + 4 <= rows) {
    const Vector<float, 4> v = load_aligned(reinterpret_cast<const Vector<float, 4>*>(src + gr + gc * cs));
    EMBER_UNROLL
    for (int j = 0; j < 4; ++j) staged[j] = v.lane[j];
    return;
  }
  EMBER_UNROLL
  for (int j = 0; j < 4; ++j) {  // scalar mode, or a vector that crosses the matrix's edge
    fast_slab_element<ROWS, COLS>(mode, t, j, r, c);
    const std::int64_t er = row0 + r, ec = col0 + c;
    staged[j] = (er < rows && ec < cols) ? src[er * rs + ec * cs] : 0.0f;
  }
}

// Writes the staged elements into a shared slab laid out as dst[r * dsr + c * dsc].
template <int ROWS, int COLS>
EMBER_DEVICE void store_fast_slab(const float (&staged)[kFastPerThreadLoads], TileLoad mode, int t,
                                  SharedPointer<float> dst, int dsr, int dsc) {
  int r = 0, c = 0;
  fast_slab_element<ROWS, COLS>(mode, t, 0, r, c);
  // A vector whose axis is also contiguous in shared memory is stored in one access.
  if ((mode == TileLoad::VectorAlongCols && dsc == 1) || (mode == TileLoad::VectorAlongRows && dsr == 1)) {
    Vector<float, 4> v;
    EMBER_UNROLL
    for (int j = 0; j < 4; ++j) v.lane[j] = staged[j];
    shared_store_vector(dst, r * dsr + c * dsc, v);
    return;
  }
  EMBER_UNROLL
  for (int j = 0; j < 4; ++j) {
    fast_slab_element<ROWS, COLS>(mode, t, j, r, c);
    dst[r * dsr + c * dsc] = staged[j];
  }
}

// T is float (a template only so that the header can be included by several files).
template <class T>
EMBER_GLOBAL void EMBER_LAUNCH_BOUNDS(kFastThreads, 2) gemm_fast_kernel(GemmPlan plan, TileLoad a_mode, TileLoad b_mode) {
  static_assert(std::is_same_v<T, float>, "the fast GEMM is float32 only");
  // [buffer][k][m] and [buffer][k][n]: a k step reads 128 consecutive floats of each.
  EMBER_SHARED_ARRAY_ALIGNED(float, a_slabs, 2 * kFastSlabA, 16);
  EMBER_SHARED_ARRAY_ALIGNED(float, b_slabs, 2 * kFastSlabB, 16);
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  const int t = ty * 16 + tx;
  const float alpha = static_cast<float>(plan.alpha), beta = static_cast<float>(plan.beta);
  const GemmTiles grid_tiles = gemm_tiles(plan.m, plan.n, kFastTileM, kFastTileN);
  const std::int64_t col_tiles = grid_tiles.col_tiles, tiles = grid_tiles.tiles;

  // Uniform loops (block indices only): every thread reaches every barrier.
  for (std::int64_t batch = blockIdx.z; batch < plan.batch; batch += gridDim.z)
  for (std::int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const std::int64_t m0 = (tile / col_tiles) * kFastTileM, n0 = (tile % col_tiles) * kFastTileN;
    const float* a = static_cast<const float*>(plan.a) + batch * plan.batch_stride_a;
    const float* b = static_cast<const float*>(plan.b) + batch * plan.batch_stride_b;
    float* c = static_cast<float*>(plan.c) + batch * plan.batch_stride_c;
    const float* bias =
        plan.bias == nullptr ? nullptr : static_cast<const float*>(plan.bias) + batch * plan.batch_stride_bias;

    float acc[8][8] = {};
    float a_staged[kFastPerThreadLoads], b_staged[kFastPerThreadLoads];
    const std::int64_t slabs = (plan.k + kFastTileK - 1) / kFastTileK;
    if (slabs > 0) {
      fetch_fast_slab<kFastTileM, kFastTileK>(a, plan.row_stride_a, plan.col_stride_a, m0, 0, plan.m, plan.k, a_mode, t,
                                              a_staged);
      fetch_fast_slab<kFastTileK, kFastTileN>(b, plan.row_stride_b, plan.col_stride_b, 0, n0, plan.k, plan.n, b_mode, t,
                                              b_staged);
      store_fast_slab<kFastTileM, kFastTileK>(a_staged, a_mode, t, a_slabs, 1, kFastTileM);
      store_fast_slab<kFastTileK, kFastTileN>(b_staged, b_mode, t, b_slabs, kFastTileN, 1);
    }
    EMBER_SYNCTHREADS();  // slab 0 complete (and the previous tile's reads finished)
    for (std::int64_t s = 0; s < slabs; ++s) {
      const int current = static_cast<int>(s & 1);
      const bool more = s + 1 < slabs;
      if (more) {  // the next slab's loads go out before this slab's arithmetic
        const std::int64_t k0 = (s + 1) * kFastTileK;
        fetch_fast_slab<kFastTileM, kFastTileK>(a, plan.row_stride_a, plan.col_stride_a, m0, k0, plan.m, plan.k, a_mode,
                                                t, a_staged);
        fetch_fast_slab<kFastTileK, kFastTileN>(b, plan.row_stride_b, plan.col_stride_b, k0, n0, plan.k, plan.n, b_mode,
                                                t, b_staged);
      }
      const SharedPointer<float> a_slab = a_slabs + current * kFastSlabA, b_slab = b_slabs + current * kFastSlabB;
      EMBER_UNROLL
      for (int kk = 0; kk < kFastTileK; ++kk) {
        float a_frag[8], b_frag[8];
        EMBER_UNROLL
        for (int half = 0; half < 2; ++half) {
          const Vector<float, 4> av = shared_load_vector<Vector<float, 4>>(a_slab, kk * kFastTileM + half * 64 + ty * 4);
          const Vector<float, 4> bv = shared_load_vector<Vector<float, 4>>(b_slab, kk * kFastTileN + half * 64 + tx * 4);
          EMBER_UNROLL
          for (int j = 0; j < 4; ++j) {
            a_frag[half * 4 + j] = av.lane[j];
            b_frag[half * 4 + j] = bv.lane[j];
          }
        }
        EMBER_UNROLL
        for (int i = 0; i < 8; ++i) {
          EMBER_UNROLL
          for (int j = 0; j < 8; ++j) acc[i][j] += a_frag[i] * b_frag[j];
        }
      }
      if (more) {
        const int next = current ^ 1;
        store_fast_slab<kFastTileM, kFastTileK>(a_staged, a_mode, t, a_slabs + next * kFastSlabA, 1, kFastTileM);
        store_fast_slab<kFastTileK, kFastTileN>(b_staged, b_mode, t, b_slabs + next * kFastSlabB, kFastTileN, 1);
      }
      EMBER_SYNCTHREADS();  // the next slab is written, and this one is no longer read
    }
    // Epilogue, as gemm.cuh's: C = alpha·acc (+ beta·addend, from C or from addmm's bias).
    EMBER_UNROLL
    for (int i = 0; i < 8; ++i) {
      const std::int64_t row = m0 + (i / 4) * 64 + ty * 4 + i % 4;
      if (row >= plan.m) continue;
      EMBER_UNROLL
      for (int j = 0; j < 8; ++j) {
        const std::int64_t col = n0 + (j / 4) * 64 + tx * 4 + j % 4;
        if (col >= plan.n) continue;
        float* out = c + row * plan.row_stride_c + col * plan.col_stride_c;
        if (beta == 0.0f) {  // C may be uninitialised: never read it
          *out = alpha * acc[i][j];
        } else {
          const float addend = bias != nullptr ? bias[row * plan.row_stride_bias + col * plan.col_stride_bias] : *out;
          *out = alpha * acc[i][j] + beta * addend;
        }
      }
    }
  }
}

// Whether the plan runs on the fast kernel: float32, and enough 128×128 tiles.
inline bool gemm_uses_fast_kernel(const GemmPlan& plan) {
  if (plan.dtype != DType::Float32) return false;
  return gemm_tiles(plan.m, plan.n, kFastTileM, kFastTileN).tiles * plan.batch >= kFastMinTiles;
}

// Runs a float32 plan on the fast kernel whatever its size (tests and benchmarks call this
// directly; ember's GEMM entry point asks gemm_uses_fast_kernel first).
inline void dispatch_gemm_fast(const GemmPlan& plan, cudaStream_t stream, std::int64_t max_blocks_x = kGemmMaxGridX) {
  if (plan.batch == 0 || plan.m == 0 || plan.n == 0) return;
  EMBER_CHECK(plan.dtype == DType::Float32, DTypeError, "the fast CUDA GEMM is float32 only, got ",
              scalar_type_name(plan.dtype));
  const TileLoad a_mode = choose_tile_load<float>(plan.a, plan.batch_stride_a, plan.row_stride_a, plan.col_stride_a);
  const TileLoad b_mode = choose_tile_load<float>(plan.b, plan.batch_stride_b, plan.row_stride_b, plan.col_stride_b);
  const std::int64_t tiles = gemm_tiles(plan.m, plan.n, kFastTileM, kFastTileN).tiles;
  const std::int64_t grid_x = tiles < max_blocks_x ? tiles : max_blocks_x;
  const std::int64_t grid_z = plan.batch < kGemmMaxGridZ ? plan.batch : kGemmMaxGridZ;
  const dim3 grid(static_cast<unsigned>(grid_x), 1u, static_cast<unsigned>(grid_z));
  auto kernel = &gemm_fast_kernel<float>;
  EMBER_LAUNCH(kernel, grid, dim3(16, 16), stream, plan, a_mode, b_mode);
}

// ember's choice for a plan: the fast kernel where gemm_uses_fast_kernel says so, the
// reading kernel otherwise (the convolutions' GEMMs; cuda_gemm.cu adds the backend choice).
inline void dispatch_gemm_auto(const GemmPlan& plan, cudaStream_t stream) {
  if (gemm_uses_fast_kernel(plan)) dispatch_gemm_fast(plan, stream);
  else dispatch_gemm(plan, stream);
}

EMBER_KERNELS_END
