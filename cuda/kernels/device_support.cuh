// cuda/kernels/device_support.cuh — the few CUDA words our kernels use, for two compilers.
//
// Every kernel in cuda/kernels/*.cuh is written once and compiled twice:
//   * by nvcc (cuda/*.cu) for the GPU, where the macros below are CUDA's own keywords;
//   * by a plain C++ compiler for the tests (tests/cuda/), where they map onto the CPU
//     emulator in cuda/emulate/emulator.h, which runs a grid's threads as fibers.
// So a kernel spells `__global__` as EMBER_GLOBAL, a shared array as EMBER_SHARED_ARRAY,
// `__syncthreads()` as EMBER_SYNCTHREADS(), shuffles and votes as warp_shfl_down /
// warp_ballot / warp_any / warp_all, and launches with EMBER_LAUNCH. threadIdx,
// blockIdx, blockDim and gridDim keep their CUDA names in both worlds.
// Docs: docs/cuda.md ("Kernels that run without a GPU").
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>
#if !defined(__CUDACC__)
#include <atomic>
#endif

#include <ember/core/element_math.h>
#include <ember/core/host_device.h>

#if defined(__CUDACC__)

#include <cuda_runtime.h>

#include <ember/cuda/cuda_check.h>

#define EMBER_GLOBAL __global__
#define EMBER_DEVICE __device__ __forceinline__
#define EMBER_SHARED_ARRAY(type, name, count) __shared__ type name[count]
// The same, its start aligned to `alignment` bytes: for 16-byte vector accesses
// (shared_load_vector), which a float array's natural 4-byte alignment does not allow.
#define EMBER_SHARED_ARRAY_ALIGNED(type, name, count, alignment) __shared__ __align__(alignment) type name[count]
// Before a loop of constant trip count whose array indices must become registers (a
// register tile): unrolled fully, or the arrays would live in slow local memory.
#define EMBER_UNROLL _Pragma("unroll")
// After EMBER_GLOBAL: at most THREADS threads per block, and registers few enough for
// BLOCKS blocks per SM (ptxas spills rather than exceed them).
#define EMBER_LAUNCH_BOUNDS(threads, blocks) __launch_bounds__(threads, blocks)
#define EMBER_SYNCTHREADS() __syncthreads()
// Launch, then check the launch (bad configuration, missing kernel image...) at once, so
// the error names the kernel instead of surfacing at some later synchronisation. An error
// an earlier call left behind is cleared first (launch_checked, cuda/cuda_check.h).
#define EMBER_LAUNCH(kernel, grid, block, stream, ...)                                       \
  ::ember::cuda::launch_checked([&] { kernel<<<(grid), (block), 0, (stream)>>>(__VA_ARGS__); }, \
                                #kernel, __func__, __FILE__, __LINE__)

#else  // plain C++: the CPU emulator

#include <ember/cuda/emulate/emulator.h>

#define EMBER_GLOBAL
#define EMBER_DEVICE inline
// A checked shared array (cuda/emulate/shared_memory.h): indexes like a pointer, and lets
// the emulator see every access (initcheck, racecheck, bounds).
#define EMBER_SHARED_ARRAY(type, name, count) \
  const ::ember::emulate::SharedPtr<type> name = ::ember::emulate::shared_array<type>(count)
#define EMBER_SHARED_ARRAY_ALIGNED(type, name, count, alignment) \
  const ::ember::emulate::SharedPtr<type> name = ::ember::emulate::shared_array<type>(count, alignment)
#define EMBER_UNROLL
#define EMBER_LAUNCH_BOUNDS(threads, blocks)
#define EMBER_SYNCTHREADS() ::ember::emulate::syncthreads()
// The emulator runs every launch to completion in order, so the stream is not needed (but
// is still "used": the dispatch functions take it for the GPU build).
#define EMBER_LAUNCH(kernel, grid, block, stream, ...)                        \
  do {                                                                        \
    static_cast<void>(stream);                                                \
    ::ember::emulate::launch((grid), (block), [&] { kernel(__VA_ARGS__); }, #kernel, __func__); \
  } while (0)

#endif

// The kernels' namespace differs between the two compilations (gpu vs emulated), so a test
// binary that links the real backend *and* compiles the emulated kernels never sees two
// different definitions of one inline function or template under one name.
#if defined(__CUDACC__)
#define EMBER_KERNELS_BEGIN namespace ember::cuda::kernels { inline namespace gpu {
#else
#define EMBER_KERNELS_BEGIN namespace ember::cuda::kernels { inline namespace emulated {
#endif
#define EMBER_KERNELS_END } }

EMBER_KERNELS_BEGIN

constexpr int kWarpSize = 32;

// A pointer to shared memory, for helpers that take a kernel's shared array as a parameter
// (e.g. block_reduce's scratch): a plain T* on the GPU, the emulator's checked SharedPtr<T>
// on the CPU.
#if defined(__CUDACC__)
template <class T> using SharedPointer = T*;
#else
template <class T> using SharedPointer = ::ember::emulate::SharedPtr<T>;
#endif

// One vector-wide (up to 16-byte) access of shared memory: Vec holds several T, e.g.
// Vector<float, 4> (elementwise.cuh) read from a float tile at element `index`. The address
// must be aligned to sizeof(Vec); the emulator checks that, the bounds, and records the
// access for initcheck and racecheck like any other.
template <class Vec, class T>
EMBER_DEVICE Vec shared_load_vector(SharedPointer<T> base, std::int64_t index) {
#if defined(__CUDACC__)
  return *reinterpret_cast<const Vec*>(base + index);
#else
  const T* address = base.checked_range(index, static_cast<std::ptrdiff_t>(sizeof(Vec) / sizeof(T)));
  ::ember::emulate::check_alignment(address, sizeof(Vec), "shared vector load");
  ::ember::emulate::shared_access(address, sizeof(Vec), /*write=*/false);
  Vec value;
  std::memcpy(static_cast<void*>(&value), address, sizeof(Vec));
  return value;
#endif
}
template <class Vec, class T>
EMBER_DEVICE void shared_store_vector(SharedPointer<T> base, std::int64_t index, const Vec& value) {
#if defined(__CUDACC__)
  *reinterpret_cast<Vec*>(base + index) = value;
#else
  T* address = base.checked_range(index, static_cast<std::ptrdiff_t>(sizeof(Vec) / sizeof(T)));
  ::ember::emulate::check_alignment(address, sizeof(Vec), "shared vector store");
  ::ember::emulate::shared_access(address, sizeof(Vec), /*write=*/true);
  std::memcpy(static_cast<void*>(address), &value, sizeof(Vec));
#endif
}

// One vector-wide (up to 16-byte) access of global memory. The hardware needs the address
// aligned to the access size, so the emulator checks it (memcheck's "misaligned address").
template <class Vec>
EMBER_DEVICE Vec load_aligned(const Vec* address) {
#if !defined(__CUDACC__)
  ::ember::emulate::check_alignment(address, sizeof(Vec), "vector load");
#endif
  return *address;
}
template <class Vec>
EMBER_DEVICE void store_aligned(Vec* address, const Vec& value) {
#if !defined(__CUDACC__)
  ::ember::emulate::check_alignment(address, sizeof(Vec), "vector store");
#endif
  *address = value;
}

// out-of-line helpers shared by every kernel ------------------------------------------

// Shuffle down within a warp: lane l receives lane l+delta's value (its own past lane 31).
template <class T>
EMBER_DEVICE T warp_shfl_down(T value, unsigned delta) {
#if defined(__CUDACC__)
  if constexpr (sizeof(T) == 8 && std::is_integral_v<T>) {
    return static_cast<T>(__shfl_down_sync(0xffffffffu, static_cast<long long>(value), delta));
  } else {
    return __shfl_down_sync(0xffffffffu, value, delta);
  }
#else
  return ::ember::emulate::shfl_down(value, delta);
#endif
}

// Warp votes (__ballot_sync, __any_sync, __all_sync) over the full warp. Like the shuffle
// above they assume all 32 lanes take part (block sizes that are multiples of 32, no
// divergence around the call); the emulator reports a vote in a partial warp. No kernel
// uses them yet — they are here, emulated and tested, for early-exit tests such as
// "does any lane of this warp still have work".
EMBER_DEVICE unsigned warp_ballot(bool predicate) {
#if defined(__CUDACC__)
  return __ballot_sync(0xffffffffu, predicate);
#else
  return ::ember::emulate::warp_ballot(predicate);
#endif
}
EMBER_DEVICE bool warp_any(bool predicate) {
#if defined(__CUDACC__)
  return __any_sync(0xffffffffu, predicate) != 0;
#else
  return ::ember::emulate::warp_ballot(predicate) != 0;
#endif
}
EMBER_DEVICE bool warp_all(bool predicate) {
#if defined(__CUDACC__)
  return __all_sync(0xffffffffu, predicate) != 0;
#else
  std::uint32_t participants = 0;
  const std::uint32_t ballot = ::ember::emulate::warp_ballot(predicate, &participants);
  return ballot == participants;
#endif
}

// atomicAdd for every ember dtype. float/double/int32/int64 map to hardware atomics; the
// one-byte types (uint8, bool) have none, so they update their containing 32-bit word
// with a compare-and-swap loop.
template <class T>
EMBER_DEVICE void atomic_add(T* address, T value) {
#if defined(__CUDACC__)
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, std::int32_t>) {
    atomicAdd(address, value);
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    // Two's complement: adding as unsigned 64-bit gives the same bits.
    atomicAdd(reinterpret_cast<unsigned long long*>(address), static_cast<unsigned long long>(value));
  } else {
    static_assert(sizeof(T) == 1, "atomic_add: unsupported type");
    auto byte_address = reinterpret_cast<std::uintptr_t>(address);
    auto* word = reinterpret_cast<unsigned int*>(byte_address & ~std::uintptr_t{3});
    unsigned shift = static_cast<unsigned>(byte_address & 3) * 8;
    unsigned int old = *word, assumed;
    do {
      assumed = old;
      T current = static_cast<T>((assumed >> shift) & 0xffu);
      T updated = static_cast<T>(current + value);
      unsigned int byte = static_cast<unsigned int>(static_cast<std::uint8_t>(updated));
      unsigned int replacement = (assumed & ~(0xffu << shift)) | (byte << shift);
      old = atomicCAS(word, assumed, replacement);
    } while (old != assumed);
  }
#else
  // Blocks run on several host threads at once, so this must be a real atomic update: a
  // compare-and-swap loop on the host (integers wrap modulo 2^N, as atomicAdd does).
  ::ember::emulate::check_alignment(address, sizeof(T), "atomic_add");
  std::atomic_ref<T> target(*address);
  T expected = target.load(std::memory_order_relaxed);
  while (!target.compare_exchange_weak(expected, math::add(expected, value), std::memory_order_relaxed)) {
  }
#endif
}

// Linear thread id in the grid along x, and the grid's total thread count (grid-stride loops).
EMBER_DEVICE std::int64_t global_thread_index() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
EMBER_DEVICE std::int64_t grid_thread_count() {
  return static_cast<std::int64_t>(gridDim.x) * blockDim.x;
}

// Blocks for `work_items` items at `threads` per block, capped so grid-stride loops take
// over for huge tensors (a grid of 2^16 blocks already fills every SM many times).
inline unsigned blocks_for(std::int64_t work_items, int threads, std::int64_t cap = 65535) {
  std::int64_t blocks = (work_items + threads - 1) / threads;
  if (blocks < 1) blocks = 1;
  if (blocks > cap) blocks = cap;
  return static_cast<unsigned>(blocks);
}

EMBER_KERNELS_END
