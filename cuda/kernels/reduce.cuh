// cuda/kernels/reduce.cuh — sum / mean / prod / max / min / argmax / argmin over a ReducePlan.
//
// The input is contiguous [outer, reduce, inner]; each of the outer × inner outputs is a
// fold along the middle dim. Strategy: one block per output (grid-stride over outputs);
// thread t folds elements r = t, t + blockDim, ... in order, then block_reduce combines
// the threads (warp shuffles + one shared-memory step). Fixed order => deterministic.
// The accumulator is float for float32 results, double for float64, int64 for integers
// (PyTorch's CUDA accumulate types). Max/min carry (value, index) pairs: NaN wins (PyTorch
// propagates NaN) and ties go to the smaller index (PyTorch returns the first maximum).
// Bound: memory bandwidth, reading numel × itemsize bytes once (for inner == 1 consecutive
// threads read consecutive elements; for inner > 1 reads are strided by inner elements).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <ember/core/backend.h>
#include <ember/core/error.h>
#include <ember/cuda/kernels/block_reduce.cuh>
#include <ember/core/element_math.h>

EMBER_KERNELS_BEGIN

// A running fold: the accumulated value and, for max/min, where it was found.
// index < 0 means "no element yet" — the identity of every op.
template <class Acc>
struct ReducePartial {
  Acc value;
  std::int64_t index;
  EMBER_DEVICE ReducePartial shuffle_down(unsigned delta) const {
    return ReducePartial{warp_shfl_down(value, delta), warp_shfl_down(index, delta)};
  }
};

template <class Acc>
struct ReduceCombine {
  ReduceOp op;
  EMBER_DEVICE ReducePartial<Acc> operator()(ReducePartial<Acc> a, ReducePartial<Acc> b) const {
    if (a.index < 0) return b;
    if (b.index < 0) return a;
    switch (op) {
      case ReduceOp::Sum:
      case ReduceOp::Mean: return {math::add(a.value, b.value), a.index < b.index ? a.index : b.index};
      case ReduceOp::Prod: return {math::mul(a.value, b.value), a.index < b.index ? a.index : b.index};
      default: break;
    }
    const bool want_max = op == ReduceOp::Max || op == ReduceOp::ArgMax;
    const bool a_nan = math::isnan(a.value), b_nan = math::isnan(b.value);
    bool take_a;
    if (a_nan || b_nan) take_a = a_nan && (!b_nan || a.index < b.index);
    else if (a.value == b.value) take_a = a.index < b.index;
    else take_a = want_max ? a.value > b.value : a.value < b.value;
    return take_a ? a : b;
  }
};

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
  }
}

// Mean over zero elements: NaN for floats (0/0); integers cannot hold NaN, so 0.
template <class Acc>
EMBER_DEVICE Acc empty_mean() {
  if constexpr (std::is_floating_point_v<Acc>) return Acc(0) / Acc(0);
  else return Acc(0);
}

// Writes output `out` of the plan from its folded partial (thread 0 of a block calls it).
template <class Acc>
EMBER_DEVICE void store_result(const ReducePlan& plan, ReduceOp op, std::int64_t out, ReducePartial<Acc> partial) {
  switch (op) {
    // A sum starts at +0, as PyTorch's: a column of -0.0 sums to +0.0 (-0 + +0 = +0).
    case ReduceOp::Sum:
      store_as(plan.output, plan.output_dtype, out, partial.index < 0 ? Acc(0) : math::add(partial.value, Acc(0)));
      break;
    case ReduceOp::Prod: store_as(plan.output, plan.output_dtype, out, partial.index < 0 ? Acc(1) : partial.value); break;
    case ReduceOp::Mean:  // mean of nothing is 0/0 = NaN, as PyTorch
      store_as(plan.output, plan.output_dtype, out,
               partial.index < 0 ? empty_mean<Acc>()
                                 : static_cast<Acc>(math::add(partial.value, Acc(0)) / static_cast<Acc>(plan.reduce)));
      break;
    case ReduceOp::Max:
    case ReduceOp::Min:
      store_as(plan.output, plan.output_dtype, out, partial.value);
      if (plan.indices != nullptr) static_cast<std::int64_t*>(plan.indices)[out] = partial.index;
      break;
    case ReduceOp::ArgMax:
    case ReduceOp::ArgMin: store_as(plan.output, plan.output_dtype, out, partial.index); break;
  }
}

template <class In, class Acc>
EMBER_GLOBAL void reduce_kernel(ReducePlan plan, ReduceOp op) {
  EMBER_SHARED_ARRAY(ReducePartial<Acc>, scratch, kMaxBlockReduceWarps + 1);
  const ReduceCombine<Acc> combine{op};
  const ReducePartial<Acc> identity{Acc(0), -1};
  const In* input = static_cast<const In*>(plan.input);
  const std::int64_t outputs = plan.outer * plan.inner;
  // The loop bound is the same for every thread of a block, so the barriers inside
  // block_reduce are reached by all of them.
  for (std::int64_t out = blockIdx.x; out < outputs; out += gridDim.x) {
    const std::int64_t o = out / plan.inner, i = out % plan.inner;
    const In* row = input + o * plan.reduce * plan.inner + i;
    ReducePartial<Acc> partial = identity;
    for (std::int64_t r = threadIdx.x; r < plan.reduce; r += blockDim.x)
      partial = combine(partial, ReducePartial<Acc>{static_cast<Acc>(row[r * plan.inner]), r});
    partial = block_reduce(partial, combine, identity, scratch);
    if (threadIdx.x == 0) store_result(plan, op, out, partial);
  }
}

// Split reductions, pass 1: the reduce dim of each output is cut into `chunks` ranges and
// block b folds range b % chunks of output b / chunks into partials[b]. Indices stay
// absolute, so argmax over the partials is still the argmax of the row.
template <class In, class Acc>
EMBER_GLOBAL void reduce_chunks_kernel(ReducePlan plan, ReduceOp op, std::int64_t chunks, ReducePartial<Acc>* partials) {
  EMBER_SHARED_ARRAY(ReducePartial<Acc>, scratch, kMaxBlockReduceWarps + 1);
  const ReduceCombine<Acc> combine{op};
  const ReducePartial<Acc> identity{Acc(0), -1};
  const std::int64_t chunk_length = (plan.reduce + chunks - 1) / chunks;
  const std::int64_t blocks = plan.outer * plan.inner * chunks;
  for (std::int64_t b = blockIdx.x; b < blocks; b += gridDim.x) {
    const std::int64_t out = b / chunks, chunk = b % chunks;
    const std::int64_t o = out / plan.inner, i = out % plan.inner;
    const In* row = static_cast<const In*>(plan.input) + o * plan.reduce * plan.inner + i;
    const std::int64_t begin = chunk * chunk_length;
    const std::int64_t end = begin + chunk_length < plan.reduce ? begin + chunk_length : plan.reduce;
    ReducePartial<Acc> partial = identity;
    for (std::int64_t r = begin + threadIdx.x; r < end; r += blockDim.x)
      partial = combine(partial, ReducePartial<Acc>{static_cast<Acc>(row[r * plan.inner]), r});
    partial = block_reduce(partial, combine, identity, scratch);
    if (threadIdx.x == 0) partials[b] = partial;
  }
}

// Split reductions, pass 2: one block per output folds its `chunks` partials, in order.
template <class Acc>
EMBER_GLOBAL void reduce_partials_kernel(ReducePlan plan, ReduceOp op, std::int64_t chunks,
                                         const ReducePartial<Acc>* partials) {
  EMBER_SHARED_ARRAY(ReducePartial<Acc>, scratch, kMaxBlockReduceWarps + 1);
  const ReduceCombine<Acc> combine{op};
  const ReducePartial<Acc> identity{Acc(0), -1};
  for (std::int64_t out = blockIdx.x; out < plan.outer * plan.inner; out += gridDim.x) {
    ReducePartial<Acc> partial = identity;
    for (std::int64_t c = threadIdx.x; c < chunks; c += blockDim.x) partial = combine(partial, partials[out * chunks + c]);
    partial = block_reduce(partial, combine, identity, scratch);
    if (threadIdx.x == 0) store_result(plan, op, out, partial);
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

// When few outputs share a long reduce dim, one block per output would leave most SMs
// idle (a full sum would run on one SM). Then the dim is split so that about
// kSplitTargetBlocks blocks work, each on at least kMinChunk elements. 2048 blocks of 256
// threads fill an H200's 132 SMs twice over (8 such blocks are resident per SM): a memory-
// bound fold needs that many loads in flight (512 blocks read at 27 % of copy bandwidth on
// the first H200 run, docs/cuda.md). A constant, not the device's SM count: the chunking
// fixes the summation order, so the same sum gives the same bits on every GPU.
constexpr std::int64_t kSplitTargetBlocks = 2048;
constexpr std::int64_t kMinChunk = 4096;

inline std::int64_t reduce_chunks(const ReducePlan& plan) {
  const std::int64_t outputs = plan.outer * plan.inner;
  if (outputs >= kSplitTargetBlocks / 2 || plan.reduce < 2 * kMinChunk) return 1;
  std::int64_t chunks = kSplitTargetBlocks / outputs;
  const std::int64_t by_length = plan.reduce / kMinChunk;
  return chunks < by_length ? chunks : by_length;
}

template <class In, class Acc>
void launch_reduce_typed(ReduceOp op, const ReducePlan& plan, ScratchAllocator* scratch, cudaStream_t stream) {
  const std::int64_t outputs = plan.outer * plan.inner;
  const std::int64_t chunks = scratch != nullptr ? reduce_chunks(plan) : 1;
  if (chunks <= 1) {
    auto kernel = &reduce_kernel<In, Acc>;
    EMBER_LAUNCH(kernel, dim3(blocks_for(outputs, 1)), dim3(reduce_block_threads(plan.reduce)), stream, plan, op);
    return;
  }
  const std::size_t bytes = sizeof(ReducePartial<Acc>) * static_cast<std::size_t>(outputs * chunks);
  auto* partials = static_cast<ReducePartial<Acc>*>(scratch->allocate(bytes));
  auto first = &reduce_chunks_kernel<In, Acc>;
  EMBER_LAUNCH(first, dim3(blocks_for(outputs * chunks, 1)), dim3(256), stream, plan, op, chunks, partials);
  auto second = &reduce_partials_kernel<Acc>;
  EMBER_LAUNCH(second, dim3(blocks_for(outputs, 1)), dim3(reduce_block_threads(chunks)), stream, plan, op, chunks,
               static_cast<const ReducePartial<Acc>*>(partials));
  // Safe right away on the GPU: the caching allocator hands the block out again only to
  // work queued later on this same stream.
  scratch->release(partials, bytes);
}

// Picks the accumulator: from the output for sum/mean/prod (sum(int32) is int64, sum with
// dtype=float64 accumulates in double), from the input for max/min/arg*.
// `scratch` enables the split (two-pass) path for long reductions; nullptr = one pass.
inline void dispatch_reduce(ReduceOp op, const ReducePlan& plan, cudaStream_t stream,
                            ScratchAllocator* scratch = nullptr) {
  if (plan.outer * plan.inner == 0) return;
  const bool folds_values = op == ReduceOp::Sum || op == ReduceOp::Mean || op == ReduceOp::Prod;
  const DType acc_from = folds_values ? plan.output_dtype : plan.input_dtype;
  EMBER_DISPATCH_ALL(plan.input_dtype, {
    using In = scalar_t;
    if (acc_from == DType::Float32) launch_reduce_typed<In, float>(op, plan, scratch, stream);
    else if (acc_from == DType::Float64) launch_reduce_typed<In, double>(op, plan, scratch, stream);
    else launch_reduce_typed<In, std::int64_t>(op, plan, scratch, stream);
  });
}

EMBER_KERNELS_END
