// cuda/kernels/block_reduce.cuh — combine one value per thread into one value per block.
//
// The classic two-level tree: a warp folds its 32 values with 5 shuffle-down steps (no
// shared memory, no barrier), lane 0 of each warp parks the warp's result in shared
// memory, and the first warp folds those. The order of combination is fixed by thread
// indices, so the result is bit-for-bit reproducible run to run (deterministic).
// Used by reduce.cuh and softmax.cuh. Cost: 5 shuffles + 2 barriers per block.
#pragma once

#include <ember/cuda/kernels/device_support.cuh>

EMBER_KERNELS_BEGIN

constexpr int kMaxBlockReduceWarps = 32;  // 1024 threads

// Folds `value` across the warp with `combine`; lane 0 ends with the warp's result.
// Partial must provide shuffle_down(unsigned) returning the partial of lane + delta.
template <class Partial, class Combine>
EMBER_DEVICE Partial warp_reduce(Partial value, const Combine& combine) {
  for (unsigned delta = kWarpSize / 2; delta > 0; delta /= 2) value = combine(value, value.shuffle_down(delta));
  return value;
}

// Every thread of the block must call this (it contains barriers); the block's result is
// returned to *every* thread. `identity` fills the lanes past the last warp.
// `scratch` must hold kMaxBlockReduceWarps + 1 partials of shared memory.
template <class Partial, class Combine>
EMBER_DEVICE Partial block_reduce(Partial value, const Combine& combine, Partial identity, SharedPointer<Partial> scratch) {
  const unsigned thread = threadIdx.x;
  const unsigned lane = thread % kWarpSize, warp = thread / kWarpSize;
  const unsigned warps = (blockDim.x + kWarpSize - 1) / kWarpSize;
  value = warp_reduce(value, combine);
  if (lane == 0) scratch[warp] = value;
  EMBER_SYNCTHREADS();
  if (warp == 0) {
    Partial folded = lane < warps ? scratch[lane] : identity;
    folded = warp_reduce(folded, combine);
    if (lane == 0) scratch[kMaxBlockReduceWarps] = folded;
  }
  EMBER_SYNCTHREADS();
  Partial result = scratch[kMaxBlockReduceWarps];
  EMBER_SYNCTHREADS();  // scratch may be reused by the caller's next row
  return result;
}

// Threads for a block that folds rows of `length`: a whole number of warps, at most 256
// (short rows should not idle seven warps out of eight).
inline int reduce_block_threads(std::int64_t length) {
  std::int64_t threads = (length + kWarpSize - 1) / kWarpSize * kWarpSize;
  if (threads < kWarpSize) threads = kWarpSize;
  if (threads > 256) threads = 256;
  return static_cast<int>(threads);
}

EMBER_KERNELS_END
