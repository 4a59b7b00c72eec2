// cuda/emulate/emulator.h — runs a CUDA-style kernel grid on the CPU (tests only).
//
// The kernels in cuda/kernels/*.cuh compile as plain C++ against this header (see
// device_support.cuh). launch(grid, block, body) runs the blocks one after another; inside
// a block every CUDA thread is a fiber (ucontext) on the calling OS thread, so:
//   * threadIdx/blockIdx/blockDim/gridDim are per-fiber (the scheduler sets them on resume),
//   * EMBER_SHARED_ARRAY memory is one arena per block (48 KiB, CUDA's static limit),
//   * syncthreads() parks the fiber until every live thread of the block arrives,
//   * shfl_down() exchanges values among the 32 lanes of a warp (a warp-wide barrier),
//   * warp_ballot() is __ballot_sync / __any_sync / __all_sync over the warp's live lanes,
//   * a barrier that can never be released (divergent __syncthreads) is reported as an error.
// What it checks: indexing, bounds, tiling logic, barrier placement. What it cannot check:
// timing, coalescing, races that only real parallel hardware exposes, the memory model.
// Docs: docs/cuda.md ("The emulator").
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>

// CUDA's built-in vector type for launch shapes, in the global namespace as in CUDA.
struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

// CUDA's built-in index variables. Per OS thread; the scheduler rewrites them per fiber.
inline thread_local dim3 threadIdx;
inline thread_local dim3 blockIdx;
inline thread_local dim3 blockDim;
inline thread_local dim3 gridDim;

// CUDA's stream handle type, so launchers have the same signature in both worlds.
using cudaStream_t = void*;

namespace ember::emulate {

constexpr std::size_t kSharedMemoryBytes = 48 * 1024;
constexpr int kMaxThreadsPerBlock = 1024;

// Runs `body` (which calls the kernel) for every thread of every block of the grid.
void launch(dim3 grid, dim3 block, const std::function<void()>& body);

// __syncthreads(): waits for every live thread of the block.
void syncthreads();
// Carves `bytes` from the current block's shared arena. Every thread of a block makes the
// same calls in the same order, so they all get the same addresses.
void* shared_bytes(std::size_t bytes, std::size_t alignment);

// The warp exchange behind shfl_down: publishes this lane's 8 bytes, returns lane
// (lane + delta)'s (or its own when that lane is past the warp's end).
std::uint64_t warp_exchange_down(std::uint64_t bits, unsigned delta);

template <class T>
T shfl_down(T value, unsigned delta) {
  static_assert(sizeof(T) <= 8, "shfl_down: at most 8 bytes");
  std::uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  std::uint64_t received = warp_exchange_down(bits, delta);
  T result;
  std::memcpy(&result, &received, sizeof(T));
  return result;
}

// The warp vote behind __ballot_sync: bit l of the result is lane l's predicate, over the
// lanes of this warp that are still running (a warp barrier, like a shuffle). When
// `participants` is given it receives the mask of those lanes (for __all_sync).
std::uint32_t warp_ballot(bool predicate, std::uint32_t* participants = nullptr);

// Counters the tests read to prove the emulator really ran barriers and blocks.
struct LaunchStats {
  std::int64_t launches = 0;
  std::int64_t blocks = 0;
  std::int64_t threads = 0;
  std::int64_t barriers = 0;   // block-wide barrier releases
};
LaunchStats& stats();

}  // namespace ember::emulate
