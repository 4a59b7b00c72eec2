// cuda/kernels/reduce.cuh — sum / mean / prod / max / min / argmax / argmin over a ReducePlan.
//
// The input is contiguous [outer, reduce, inner]; each of the outer × inner outputs is a
// fold along the middle dim. Two kernels, so that a warp always reads consecutive memory:
//   * rows (inner == 1, the last dim): one block per output row; thread t folds the 16-byte
//     groups t, t + blockDim, ... of the row (one vector load each when the row start is
//     aligned, the same elements one by one when not), then block_reduce combines the
//     threads (warp shuffles + one shared-memory step);
//   * columns (inner > 1, e.g. a bias gradient summed over the batch): a block owns a tile
//     of W consecutive inner outputs (W = 32, fewer for a narrower inner) of one outer
//     index; threadIdx.x runs along inner, so a warp reads whole rows of the tile at once,
//     and threadIdx.y splits the reduce dim; rows combine by shuffles inside a warp, then
//     through shared memory across warps.
// Every combination order depends only on thread indices and the shape (never on timing or
// on the row's alignment), so results are deterministic, bit for bit. Long reductions with
// few outputs split the reduce dim over blocks (two passes; see kSplitTargetBlocks).
// Sum/mean/prod fold bare values (ValueFold); max/min/arg* fold (value, index) pairs
// (ExtremumFold): NaN wins (PyTorch propagates NaN) and ties go to the smaller index
// (PyTorch returns the first maximum). The accumulator is float for float32, bfloat16 and
// float16 results (a 16-bit result is rounded once, at the store), double for float64, int64
// for integers (PyTorch's CUDA accumulate types); max/min of 16-bit values compare them
// widened to float, which is exact.
// Bound: memory bandwidth, reading numel × itemsize bytes once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <ember/core/backend.h>
#include <ember/core/error.h>
#include <ember/cuda/kernels/block_reduce.cuh>
#include <ember/cuda/kernels/elementwise.cuh>
#include <ember/core/element_math.h>

EMBER_KERNELS_BEGIN

// Writes `value` to element `index` of a buffer of dtype `dtype` (the output's dtype is a
// runtime property; a switch here saves instantiating the kernel per output dtype).
template <class Acc>
EMBER_DEVICE void store_as(void* buffer, DType dtype, std::int64_t index, Acc value) {
  switch (dtype) {
    case DType::Bool: static_cast<bool*>(buffer)[index] = value != Acc(0); break;
    case DType::UInt8: static_cast<std::uint8_t*>(buffer)[index] = static_cast<std::uint8_t>(value); break;
    case DType::Int32: static_cast<std::int32_t*>(buffer)[index] = static_cast<std::int32_t>(value); break;
    case DType::Int64: static_cast<std::int64_t*>(buffer)[index] = static_cast<std::int64_t>(value); break;
    case DType::Float32: static_cast<float*>(buffer)[index] = static_cast<float>(value); break;
    case DType::Float64: static_cast<double*>(buffer)[index] = static_cast<double>(value); break;
    // The 16-bit floats accumulate in float (Acc) and round once here.
    case DType::BFloat16: static_cast<BFloat16*>(buffer)[index] = BFloat16(static_cast<float>(value)); break;
    case DType::Float16: static_cast<Half*>(buffer)[index] = Half(static_cast<float>(value)); break;
    default: break;
  }
}

// Mean over zero elements: NaN for floats (0/0); integers cannot hold NaN, so 0.
template <class Acc>
EMBER_DEVICE Acc empty_mean() {
  if constexpr (std::is_floating_point_v<Acc>) return Acc(0) / Acc(0);
  else return Acc(0);
}

// A fold is what the kernels below are generic over: its Partial (what a thread carries),
// identity(), element(x, r) (element r of the reduce dim as a partial), operator()(a, b)
// (combines two partials, a's elements before b's) and store() (writes an output).

// Sum, mean and prod carry the bare accumulator: the inner loop is a load and an add (or a
// multiply), no index. Starting from the identity also covers an empty reduction.
template <class Acc>
struct ValuePartial {
  Acc value;
  EMBER_DEVICE ValuePartial shuffle_down(unsigned delta) const { return ValuePartial{warp_shfl_down(value, delta)}; }
};

template <class Acc, bool Multiply>
struct ValueFold {
  using Partial = ValuePartial<Acc>;
  ReduceOp op;  // Sum or Mean (Multiply = false), Prod (Multiply = true)
  EMBER_DEVICE Partial identity() const { return Partial{Multiply ? Acc(1) : Acc(0)}; }
  EMBER_DEVICE Partial element(Acc x, std::int64_t) const { return Partial{x}; }
  EMBER_DEVICE Partial operator()(Partial a, Partial b) const {
    return Partial{Multiply ? math::mul(a.value, b.value) : math::add(a.value, b.value)};
  }
  EMBER_DEVICE void store(const ReducePlan& plan, std::int64_t out, Partial partial) const {
    if constexpr (Multiply) {
      store_as(plan.output, plan.output_dtype, out, partial.value);
    } else {
      // A sum ends by adding +0, as PyTorch's: a column of -0.0 sums to +0.0 (-0 + +0 = +0).
      const Acc sum = math::add(partial.value, Acc(0));
      if (op == ReduceOp::Mean)  // mean of nothing is 0/0 = NaN, as PyTorch
        store_as(plan.output, plan.output_dtype, out,
                 plan.reduce == 0 ? empty_mean<Acc>() : static_cast<Acc>(sum / static_cast<Acc>(plan.reduce)));
      else
        store_as(plan.output, plan.output_dtype, out, sum);
    }
  }
};

// Max, min, argmax, argmin carry where the value was found. index < 0 means "no element
// yet", the identity.
template <class Acc>
struct IndexedPartial {
  Acc value;
  std::int64_t index;
  EMBER_DEVICE IndexedPartial shuffle_down(unsigned delta) const {
    return IndexedPartial{warp_shfl_down(value, delta), warp_shfl_down(index, delta)};
  }
};

// The winner does not depend on the order of combination (the first NaN, else the extreme
// value with the smallest index), so every tree gives the CPU's sequential answer exactly.
template <class Acc>
struct ExtremumFold {
  using Partial = IndexedPartial<Acc>;
  ReduceOp op;
  EMBER_DEVICE Partial identity() const { return Partial{Acc(0), -1}; }
  EMBER_DEVICE Partial element(Acc x, std::int64_t r) const { return Partial{x, r}; }
  EMBER_DEVICE Partial operator()(Partial a, Partial b) const {
    if (a.index < 0) return b;
    if (b.index < 0) return a;
    const bool want_max = op == ReduceOp::Max || op == ReduceOp::ArgMax;
    const bool a_nan = math::isnan(a.value), b_nan = math::isnan(b.value);
    bool take_a;
    if (a_nan || b_nan) take_a = a_nan && (!b_nan || a.index < b.index);
    else if (a.value == b.value) take_a = a.index < b.index;
    else take_a = want_max ? a.value > b.value : a.value < b.value;
    return take_a ? a : b;
  }
  EMBER_DEVICE void store(const ReducePlan& plan, std::int64_t out, Partial partial) const {
    if (op == ReduceOp::ArgMax || op == ReduceOp::ArgMin) {
      store_as(plan.output, plan.output_dtype, out, partial.index);
      return;
    }
    store_as(plan.output, plan.output_dtype, out, partial.value);
    if (plan.indices != nullptr) static_cast<std::int64_t*>(plan.indices)[out] = partial.index;
  }
};

// Elements of one 16-byte load, and the unit a row thread folds: vector k of a row is
// elements [k·V, k·V + V). Chunks of a split row start at multiples of kRowChunkAlign
// elements, so an aligned row keeps its chunks aligned for every V.
template <class In>
constexpr int row_vector_width() {
  return static_cast<int>(kVectorBytes / sizeof(In));
}
constexpr std::int64_t kRowChunkAlign = kVectorBytes;  // V ≤ 16 for every dtype
// Loads per thread issued before their folds: independent loads in flight hide memory
// latency; the fold order is unchanged (ascending). A row thread holds at most 32 elements
// (one-byte dtypes: 2 vectors; 4 made max(uint8) take 86 registers).
constexpr int kLoadsInFlight = 4;
template <class In>
constexpr int row_loads_in_flight() {
  return 32 / row_vector_width<In>() < kLoadsInFlight ? 32 / row_vector_width<In>() : kLoadsInFlight;
}

template <class In, int V>
EMBER_DEVICE Vector<In, V> load_row_vector(const In* start, std::int64_t vector, bool aligned) {
  if (aligned) return load_aligned(reinterpret_cast<const Vector<In, V>*>(start) + vector);
  Vector<In, V> elements;
  for (int j = 0; j < V; ++j) elements.lane[j] = start[vector * V + j];
  return elements;
}

template <class Acc, class Fold, class In, int V>
EMBER_DEVICE void fold_row_vector(const Fold& fold, typename Fold::Partial& partial, const Vector<In, V>& elements,
                                  std::int64_t first) {
  for (int j = 0; j < V; ++j) partial = fold(partial, fold.element(static_cast<Acc>(elements.lane[j]), first + j));
}

// This thread's share of row elements [begin, begin + count): vectors threadIdx.x,
// threadIdx.x + blockDim.x, ... in order, each one's elements in order, then at most one of
// the < V elements past the last whole vector. The same elements in the same order whether
// the loads are vector loads (row start 16-byte aligned) or scalar ones, so the result does
// not depend on where the row sits in memory.
template <class In, class Acc, class Fold>
EMBER_DEVICE typename Fold::Partial fold_row(const Fold& fold, const In* row, std::int64_t begin, std::int64_t count) {
  constexpr int V = row_vector_width<In>();
  const In* start = row + begin;
  const bool aligned = reinterpret_cast<std::uintptr_t>(start) % sizeof(Vector<In, V>) == 0;  // same for the block
  const std::int64_t vectors = count / V, step = blockDim.x;
  typename Fold::Partial partial = fold.identity();
  constexpr int loads = row_loads_in_flight<In>();
  std::int64_t v = threadIdx.x;
  for (; v + (loads - 1) * step < vectors; v += loads * step) {
    Vector<In, V> loaded[loads];
    EMBER_UNROLL
    for (int k = 0; k < loads; ++k) loaded[k] = load_row_vector<In, V>(start, v + k * step, aligned);
    EMBER_UNROLL
    for (int k = 0; k < loads; ++k)
      fold_row_vector<Acc>(fold, partial, loaded[k], begin + (v + k * step) * V);
  }
  for (; v < vectors; v += step) fold_row_vector<Acc>(fold, partial, load_row_vector<In, V>(start, v, aligned), begin + v * V);
  const std::int64_t tail = vectors * V + threadIdx.x;  // blockDim.x ≥ 32 > V - 1 leftovers
  if (tail < count) partial = fold(partial, fold.element(static_cast<Acc>(start[tail]), begin + tail));
  return partial;
}

// Rows kernel (inner == 1). Block b folds chunk b % chunks of row b / chunks (chunks == 1:
// the whole row) and stores the output, or, when `partials` is set (split pass 1), parks
// the chunk's partial in partials[b]. Indices stay absolute, so argmax over the partials is
// still the argmax of the row.
template <class In, class Fold>
EMBER_GLOBAL void reduce_rows_kernel(ReducePlan plan, Fold fold, std::int64_t chunks, typename Fold::Partial* partials) {
  using Partial = typename Fold::Partial;
  using Acc = decltype(Partial::value);
  EMBER_SHARED_ARRAY(Partial, scratch, kMaxBlockReduceWarps + 1);
  const In* input = static_cast<const In*>(plan.input);
  const std::int64_t chunk_length = (plan.reduce + chunks - 1) / chunks;
  const std::int64_t aligned_length = (chunk_length + kRowChunkAlign - 1) / kRowChunkAlign * kRowChunkAlign;
  const std::int64_t blocks = plan.outer * chunks;
  // The loop bound is the same for every thread of a block, so the barriers inside
  // block_reduce are reached by all of them.
  for (std::int64_t b = blockIdx.x; b < blocks; b += gridDim.x) {
    const std::int64_t out = b / chunks, chunk = b % chunks;
    // Rounding the chunks up to aligned lengths may leave the last ones empty.
    const std::int64_t first = chunks == 1 ? 0 : chunk * aligned_length;
    const std::int64_t begin = first < plan.reduce ? first : plan.reduce;
    const std::int64_t end = chunks == 1 || begin + aligned_length > plan.reduce ? plan.reduce : begin + aligned_length;
    Partial partial = fold_row<In, Acc>(fold, input + out * plan.reduce, begin, end - begin);
    partial = block_reduce(partial, fold, fold.identity(), scratch);
    if (threadIdx.x == 0) {
      if (partials != nullptr) partials[b] = partial;
      else fold.store(plan, out, partial);
    }
  }
}

// The columns kernel's tile width: 32 columns (one warp-wide row), or the power of two
// that covers a narrower inner dim; its blocks have at most 256 threads (fewer when the
// reduce dim, per chunk, is short), always whole warps.
constexpr int kColumnTileWidth = 32;
constexpr int kColumnBlockThreads = 256;

// Columns kernel (inner > 1). Block (W, R) threads; tile = W consecutive inner outputs of
// one outer index, the reduce dim (or one chunk of it) split over the R thread rows:
// thread (x, y) folds rows y, y + R, ... of column x in order, so each warp reads 32 / W
// whole tile rows per load — consecutive addresses. Then the rows combine in a fixed tree:
// inside a warp by shuffles (lanes x, x + W, ... hold one column), across warps in warp
// order through shared memory (one partial per warp and column: at most 8 × 32).
// W is a power of two (32 unless inner is narrower) and W × R a whole number of warps.
// Block b is (outer o, tile, chunk), chunk fastest; a split stores partials[out·chunks + chunk].
template <class In, class Fold>
EMBER_GLOBAL void reduce_columns_kernel(ReducePlan plan, Fold fold, std::int64_t chunks, typename Fold::Partial* partials) {
  using Partial = typename Fold::Partial;
  using Acc = decltype(Partial::value);
  EMBER_SHARED_ARRAY(Partial, warp_partials, kColumnBlockThreads);  // ≤ 8 warps × W columns
  const In* input = static_cast<const In*>(plan.input);
  const unsigned width = blockDim.x, rows = blockDim.y;
  const unsigned thread = threadIdx.y * width + threadIdx.x;
  const unsigned lane = thread % kWarpSize, warp = thread / kWarpSize, warps = width * rows / kWarpSize;
  const std::int64_t tiles = (plan.inner + width - 1) / width;
  const std::int64_t chunk_length = (plan.reduce + chunks - 1) / chunks;
  const std::int64_t blocks = plan.outer * tiles * chunks;
  const std::int64_t row_stride = static_cast<std::int64_t>(rows) * plan.inner;
  for (std::int64_t b = blockIdx.x; b < blocks; b += gridDim.x) {
    const std::int64_t chunk = b % chunks, tile = b / chunks % tiles, o = b / chunks / tiles;
    const std::int64_t i = tile * width + threadIdx.x;
    const std::int64_t begin = chunk * chunk_length;
    const std::int64_t end = begin + chunk_length < plan.reduce ? begin + chunk_length : plan.reduce;
    Partial partial = fold.identity();
    if (i < plan.inner) {
      std::int64_t r = begin + threadIdx.y;
      std::int64_t offset = (o * plan.reduce + r) * plan.inner + i;  // of element r of column i
      for (; r + (kLoadsInFlight - 1) * static_cast<std::int64_t>(rows) < end;
           r += kLoadsInFlight * rows, offset += kLoadsInFlight * row_stride) {
        In loaded[kLoadsInFlight];
        EMBER_UNROLL
        for (int k = 0; k < kLoadsInFlight; ++k) loaded[k] = input[offset + k * row_stride];
        EMBER_UNROLL
        for (int k = 0; k < kLoadsInFlight; ++k)
          partial = fold(partial, fold.element(static_cast<Acc>(loaded[k]), r + k * static_cast<std::int64_t>(rows)));
      }
      for (; r < end; r += rows, offset += row_stride) partial = fold(partial, fold.element(static_cast<Acc>(input[offset]), r));
    }
    // Lane l = y'·W + x of a warp holds column x: fold the warp's rows onto lanes 0..W-1.
    for (unsigned delta = kWarpSize / 2; delta >= width; delta /= 2) partial = fold(partial, partial.shuffle_down(delta));
    if (lane < width) warp_partials[warp * width + lane] = partial;
    EMBER_SYNCTHREADS();
    if (warp == 0 && lane < width && i < plan.inner) {
      Partial column = warp_partials[lane];
      for (unsigned w = 1; w < warps; ++w) column = fold(column, warp_partials[w * width + lane]);
      const std::int64_t out = o * plan.inner + i;
      if (partials != nullptr) partials[out * chunks + chunk] = column;
      else fold.store(plan, out, column);
    }
    EMBER_SYNCTHREADS();  // warp_partials is reused by the next tile
  }
}

// Split reductions, pass 2: one block per output folds its `chunks` partials, in order.
template <class Fold>
EMBER_GLOBAL void reduce_partials_kernel(ReducePlan plan, Fold fold, std::int64_t chunks,
                                         const typename Fold::Partial* partials) {
  using Partial = typename Fold::Partial;
  EMBER_SHARED_ARRAY(Partial, scratch, kMaxBlockReduceWarps + 1);
  for (std::int64_t out = blockIdx.x; out < plan.outer * plan.inner; out += gridDim.x) {
    Partial partial = fold.identity();
    for (std::int64_t c = threadIdx.x; c < chunks; c += blockDim.x) partial = fold(partial, partials[out * chunks + c]);
    partial = block_reduce(partial, fold, fold.identity(), scratch);
    if (threadIdx.x == 0) fold.store(plan, out, partial);
  }
}

// Temporary device memory for split reductions (the caching allocator on the GPU, host
// memory under the emulator).
class ScratchAllocator {
 public:
  virtual ~ScratchAllocator() = default;
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void release(void* pointer, std::size_t bytes) = 0;
};

// When few blocks share a long reduce dim, most SMs would idle (a full sum would run on
// one SM). Then the dim is split so that about kSplitTargetBlocks blocks work, each on at
// least kMinChunk elements. 2048 blocks of 256 threads fill an H200's 132 SMs twice over
// (8 such blocks are resident per SM): a memory-bound fold needs that many loads in flight
// (512 blocks read at 27 % of copy bandwidth on the first H200 run, docs/cuda.md). A
// constant, not the device's SM count: the chunking fixes the summation order, so the same
// sum gives the same bits on every GPU.
constexpr std::int64_t kSplitTargetBlocks = 2048;
constexpr std::int64_t kMinChunk = 4096;

inline int column_tile_width(std::int64_t inner) {
  int width = 1;
  while (width < kColumnTileWidth && width < inner) width *= 2;
  return width;
}

inline int column_block_rows(int width, std::int64_t chunk_length) {
  const std::int64_t rows_per_warp = kWarpSize / width, max_rows = kColumnBlockThreads / width;
  std::int64_t rows = (chunk_length + rows_per_warp - 1) / rows_per_warp * rows_per_warp;
  if (rows < rows_per_warp) rows = rows_per_warp;
  if (rows > max_rows) rows = max_rows;
  return static_cast<int>(rows);
}

// How many chunks each output's reduce dim is cut into (1: no split). The rows kernel has
// one block per output; the columns kernel one per tile of W outputs, so it needs a chunk
// of only kMinChunk / W rows to give a block kMinChunk elements.
inline std::int64_t reduce_chunks(const ReducePlan& plan) {
  const bool columns = plan.inner > 1;
  const std::int64_t width = columns ? column_tile_width(plan.inner) : 1;
  const std::int64_t blocks = plan.outer * ((plan.inner + width - 1) / width);
  const std::int64_t min_rows = kMinChunk / width;
  if (blocks >= kSplitTargetBlocks / 2 || plan.reduce < 2 * min_rows) return 1;
  const std::int64_t chunks = kSplitTargetBlocks / blocks;
  const std::int64_t by_length = plan.reduce / min_rows;
  return chunks < by_length ? chunks : by_length;
}

template <class In, class Fold>
void launch_reduce_typed(const Fold& fold, const ReducePlan& plan, ScratchAllocator* scratch, cudaStream_t stream) {
  using Partial = typename Fold::Partial;
  const std::int64_t outputs = plan.outer * plan.inner;
  const std::int64_t chunks = scratch != nullptr ? reduce_chunks(plan) : 1;
  Partial* partials = nullptr;
  const std::size_t bytes = sizeof(Partial) * static_cast<std::size_t>(outputs * chunks);
  if (chunks > 1) partials = static_cast<Partial*>(scratch->allocate(bytes));
  if (plan.inner > 1) {
    const int width = column_tile_width(plan.inner);
    const int rows = column_block_rows(width, (plan.reduce + chunks - 1) / chunks);
    const std::int64_t tiles = (plan.inner + width - 1) / width;
    auto kernel = &reduce_columns_kernel<In, Fold>;
    EMBER_LAUNCH(kernel, dim3(blocks_for(plan.outer * tiles * chunks, 1)), dim3(width, rows), stream, plan, fold, chunks,
                 partials);
  } else {
    const std::int64_t chunk_length = (plan.reduce + chunks - 1) / chunks;
    auto kernel = &reduce_rows_kernel<In, Fold>;
    EMBER_LAUNCH(kernel, dim3(blocks_for(outputs * chunks, 1)),
                 dim3(reduce_block_threads((chunk_length + row_vector_width<In>() - 1) / row_vector_width<In>())), stream,
                 plan, fold, chunks, partials);
  }
  if (chunks <= 1) return;
  auto second = &reduce_partials_kernel<Fold>;
  EMBER_LAUNCH(second, dim3(blocks_for(outputs, 1)), dim3(reduce_block_threads(chunks)), stream, plan, fold, chunks,
               static_cast<const Partial*>(partials));
  // Safe right away on the GPU: the caching allocator hands the block out again only to
  // work queued later on this same stream.
  scratch->release(partials, bytes);
}

// Picks the fold and the accumulator: from the output for sum/mean/prod (sum(int32) is
// int64, sum with dtype=float64 accumulates in double), from the input for max/min/arg*.
// `scratch` enables the split (two-pass) path for long reductions; nullptr = one pass.
inline void dispatch_reduce(ReduceOp op, const ReducePlan& plan, cudaStream_t stream,
                            ScratchAllocator* scratch = nullptr) {
  if (plan.outer * plan.inner == 0) return;
  EMBER_DISPATCH_ALL_AND_REDUCED(plan.input_dtype, {
    using In = scalar_t;
    switch (op) {
      case ReduceOp::Sum:
      case ReduceOp::Mean:
      case ReduceOp::Prod: {
        const bool multiply = op == ReduceOp::Prod;
        auto launch = [&](auto accumulator) {
          using Acc = decltype(accumulator);
          if (multiply) launch_reduce_typed<In>(ValueFold<Acc, true>{op}, plan, scratch, stream);
          else launch_reduce_typed<In>(ValueFold<Acc, false>{op}, plan, scratch, stream);
        };
        if (plan.output_dtype == DType::Float64) launch(double{});
        else if (is_floating_point(plan.output_dtype)) launch(float{});  // float32, bfloat16, float16
        else launch(std::int64_t{});
        break;
      }
      case ReduceOp::Max:
      case ReduceOp::Min:
      case ReduceOp::ArgMax:
      case ReduceOp::ArgMin: {
        using Acc = std::conditional_t<is_reduced_float_v<In>, float,
                                       std::conditional_t<std::is_same_v<In, float> || std::is_same_v<In, double>, In,
                                                          std::int64_t>>;
        launch_reduce_typed<In>(ExtremumFold<Acc>{op}, plan, scratch, stream);
        break;
      }
    }
  });
}

EMBER_KERNELS_END
