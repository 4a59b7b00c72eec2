// cuda/kernels/embedding.cuh — the embedding's weight gradient on the GPU (plan:
// core/embedding_plan.h; the CPU's twin: core/cpu/embedding_kernels.cpp).
//
// grad_weight[r] = Σ grad[p] over the positions p with indices[p] == r, in input order, with
// no float atomics: the same bits as the CPU kernel and the reference loop, run after run.
// Strategy: sort, then sum segments.
//   1. Sort the (index, position) pairs by index, stably, so each row's positions end up as
//      one ascending segment: an LSD radix sort, one bit per pass over the bits that
//      num_weights - 1 needs. Each pass is three launches, all on integers:
//        count   one tile of kSortThreads pairs per block: how many have the bit clear
//        scan    one block: exclusive prefix sums of the tiles' counts (and the total)
//        scatter each block ranks its tile's pairs with a block scan and writes every pair
//                to (zeros before its tile + rank) or (all zeros + ones before it + rank):
//                a stable split, so the passes together sort stably.
//   2. Sum: one block per weight row (grid-stride); it finds its segment by binary search in
//      the sorted indices, and each thread owns columns d (strided by blockDim.x, so a warp
//      reads consecutive addresses of one gradient row) and adds the segment's gradient rows
//      for them in segment order, from 0, into a register; then writes the row once (zero
//      for the padding row and for rows nobody read, so grad_weight needs no fill first).
// Bound: the sort moves 32 bytes per pair per pass (log2(num_weights) passes: 17 for 10^5
// rows), then the sum reads grad once and writes grad_weight once. A row read by many
// positions is summed by one block, sequentially in its columns (the order is the contract);
// a wider radix (4 bits per pass) is the next step if the sort shows in a profile.
// Scratch (from the caller's ScratchAllocator): 4 · count + tiles + 1 int64s.
#pragma once

#include <cstdint>

#include <ember/core/embedding_plan.h>
#include <ember/cuda/kernels/block_reduce.cuh>
#include <ember/cuda/kernels/device_support.cuh>
#include <ember/cuda/kernels/reduce.cuh>

EMBER_KERNELS_BEGIN

using ::ember::EmbeddingBackwardPlan;

constexpr int kEmbeddingSortThreads = 256;  // pairs per tile: one per thread

// Exclusive prefix sum of one value per thread across the block (Hillis–Steele in shared
// memory, log2(blockDim) steps); *total receives the block's sum. Every thread must call it.
// `buffer` holds blockDim.x values.
EMBER_DEVICE std::int64_t block_exclusive_scan(std::int64_t value, SharedPointer<std::int64_t> buffer,
                                               std::int64_t* total) {
  const unsigned thread = threadIdx.x, threads = blockDim.x;
  buffer[thread] = value;
  EMBER_SYNCTHREADS();
  for (unsigned offset = 1; offset < threads; offset *= 2) {
    const std::int64_t left = thread >= offset ? buffer[thread - offset] : 0;
    EMBER_SYNCTHREADS();
    buffer[thread] += left;
    EMBER_SYNCTHREADS();
  }
  const std::int64_t inclusive = buffer[thread];
  *total = buffer[threads - 1];
  EMBER_SYNCTHREADS();  // the caller's next tile reuses buffer
  return inclusive - value;
}

EMBER_DEVICE bool bit_clear(std::int64_t key, int bit) { return ((key >> bit) & 1) == 0; }

// Pass step 1: zeros_per_tile[tile] = how many keys of the tile have `bit` clear.
EMBER_GLOBAL void radix_count_kernel(const std::int64_t* keys, std::int64_t count, int bit, std::int64_t tiles,
                                     std::int64_t* zeros_per_tile) {
  EMBER_SHARED_ARRAY(std::int64_t, buffer, kEmbeddingSortThreads);
  for (std::int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const std::int64_t e = tile * kEmbeddingSortThreads + threadIdx.x;
    const bool zero = e < count && bit_clear(keys[e], bit);
    std::int64_t tile_zeros = 0;
    block_exclusive_scan(zero ? 1 : 0, buffer, &tile_zeros);
    if (threadIdx.x == 0) zeros_per_tile[tile] = tile_zeros;
  }
}

// Pass step 2 (one block): values[0..n) becomes its exclusive prefix sums, *total the sum.
// Each thread folds a contiguous chunk, the block scans the chunk sums, and each thread
// rewrites its chunk from its offset.
EMBER_GLOBAL void exclusive_scan_kernel(std::int64_t* values, std::int64_t n, std::int64_t* total) {
  EMBER_SHARED_ARRAY(std::int64_t, buffer, kEmbeddingSortThreads);
  const std::int64_t per_thread = (n + blockDim.x - 1) / blockDim.x;
  const std::int64_t begin = threadIdx.x * per_thread;
  const std::int64_t end = begin + per_thread < n ? begin + per_thread : n;
  std::int64_t chunk_sum = 0;
  for (std::int64_t i = begin; i < end; ++i) chunk_sum += values[i];
  std::int64_t block_total = 0;
  std::int64_t running = block_exclusive_scan(chunk_sum, buffer, &block_total);
  for (std::int64_t i = begin; i < end; ++i) {
    const std::int64_t value = values[i];
    values[i] = running;
    running += value;
  }
  if (threadIdx.x == 0) *total = block_total;
}

// Pass step 3: the stable split by `bit`. positions_in == nullptr: the positions are the
// identity (the first pass).
EMBER_GLOBAL void radix_scatter_kernel(const std::int64_t* keys_in, const std::int64_t* positions_in,
                                       std::int64_t* keys_out, std::int64_t* positions_out, std::int64_t count,
                                       int bit, std::int64_t tiles, const std::int64_t* zeros_before_tile,
                                       const std::int64_t* total_zeros) {
  EMBER_SHARED_ARRAY(std::int64_t, buffer, kEmbeddingSortThreads);
  for (std::int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const std::int64_t e = tile * kEmbeddingSortThreads + threadIdx.x;
    const bool valid = e < count;
    const std::int64_t key = valid ? keys_in[e] : 0;
    const bool zero = valid && bit_clear(key, bit);
    std::int64_t tile_zeros = 0;
    const std::int64_t zeros_before_me = block_exclusive_scan(zero ? 1 : 0, buffer, &tile_zeros);
    if (!valid) continue;
    std::int64_t destination;
    if (zero) {
      destination = zeros_before_tile[tile] + zeros_before_me;
    } else {
      // Every pair before this one in the tile is valid, so the ones before it number
      // threadIdx.x - zeros_before_me.
      const std::int64_t ones_before_tile = tile * kEmbeddingSortThreads - zeros_before_tile[tile];
      destination = *total_zeros + ones_before_tile + (threadIdx.x - zeros_before_me);
    }
    keys_out[destination] = key;
    positions_out[destination] = positions_in != nullptr ? positions_in[e] : e;
  }
}

// The first k with sorted_keys[k] >= key.
EMBER_DEVICE std::int64_t lower_bound(const std::int64_t* sorted_keys, std::int64_t count, std::int64_t key) {
  std::int64_t low = 0, high = count;
  while (low < high) {
    const std::int64_t middle = low + (high - low) / 2;
    if (sorted_keys[middle] < key) low = middle + 1;
    else high = middle;
  }
  return low;
}

// Step 2: every row sums its segment, columns across the block's threads.
// sorted_positions == nullptr: the identity (nothing was sorted: num_weights == 1).
template <class T>
EMBER_GLOBAL void embedding_segment_sum_kernel(EmbeddingBackwardPlan plan, const std::int64_t* sorted_keys,
                                               const std::int64_t* sorted_positions) {
  const T* grad = static_cast<const T*>(plan.grad);
  T* grad_weight = static_cast<T*>(plan.grad_weight);
  const std::int64_t dim = plan.dim;
  for (std::int64_t row = blockIdx.x; row < plan.num_weights; row += gridDim.x) {
    std::int64_t begin = 0, end = 0;
    if (row != plan.padding_idx) {
      begin = lower_bound(sorted_keys, plan.count, row);
      end = lower_bound(sorted_keys, plan.count, row + 1);
    }
    for (std::int64_t d = threadIdx.x; d < dim; d += blockDim.x) {
      T sum = T(0);
      for (std::int64_t k = begin; k < end; ++k) {
        const std::int64_t position = sorted_positions != nullptr ? sorted_positions[k] : k;
        sum += grad[position * dim + d];
      }
      grad_weight[row * dim + d] = sum;
    }
  }
}

// How many bits the keys [0, num_weights) need: the radix passes.
inline int embedding_key_bits(std::int64_t num_weights) {
  int bits = 0;
  while (bits < 63 && (std::int64_t{1} << bits) < num_weights) ++bits;
  return bits;
}

inline void dispatch_embedding_backward(const EmbeddingBackwardPlan& plan, cudaStream_t stream,
                                        ScratchAllocator* scratch) {
  if (plan.num_weights == 0 || plan.dim == 0) return;
  const int bits = embedding_key_bits(plan.num_weights);
  const std::int64_t count = plan.count;
  const std::int64_t tiles = (count + kEmbeddingSortThreads - 1) / kEmbeddingSortThreads;
  const std::int64_t* sorted_keys = plan.indices;
  const std::int64_t* sorted_positions = nullptr;
  std::int64_t* storage = nullptr;
  const std::size_t bytes = sizeof(std::int64_t) * static_cast<std::size_t>(4 * count + tiles + 1);
  if (bits > 0 && count > 0) {
    storage = static_cast<std::int64_t*>(scratch->allocate(bytes));
    std::int64_t* keys[2] = {storage, storage + count};
    std::int64_t* positions[2] = {storage + 2 * count, storage + 3 * count};
    std::int64_t* zeros_per_tile = storage + 4 * count;
    std::int64_t* total_zeros = zeros_per_tile + tiles;
    const dim3 grid(blocks_for(tiles, 1)), block(kEmbeddingSortThreads);
    for (int bit = 0; bit < bits; ++bit) {
      const std::int64_t* keys_in = sorted_keys;
      const std::int64_t* positions_in = sorted_positions;
      std::int64_t* keys_out = keys[bit % 2];
      std::int64_t* positions_out = positions[bit % 2];
      EMBER_LAUNCH(radix_count_kernel, grid, block, stream, keys_in, count, bit, tiles, zeros_per_tile);
      EMBER_LAUNCH(exclusive_scan_kernel, dim3(1), block, stream, zeros_per_tile, tiles, total_zeros);
      EMBER_LAUNCH(radix_scatter_kernel, grid, block, stream, keys_in, positions_in, keys_out, positions_out, count,
                   bit, tiles, zeros_per_tile, total_zeros);
      sorted_keys = keys_out;
      sorted_positions = positions_out;
    }
  }
  EMBER_DISPATCH_FLOATING(plan.dtype, {
    auto kernel = &embedding_segment_sum_kernel<scalar_t>;
    EMBER_LAUNCH(kernel, dim3(blocks_for(plan.num_weights, 1)), dim3(reduce_block_threads(plan.dim)), stream, plan,
                 sorted_keys, sorted_positions);
  });
  if (storage != nullptr) scratch->release(storage, bytes);
}

EMBER_KERNELS_END
