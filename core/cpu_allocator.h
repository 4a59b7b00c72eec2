// core/cpu_allocator.h — the CPU's caching allocator: where every CPU Storage gets its bytes.
//
// Tutorial appendix (performance); issue 8. A training step allocates the same tensors every
// iteration (activations, gradients, temporaries) and frees them again. Served by malloc,
// large blocks come from mmap each time: the kernel maps fresh pages, and the first write to
// each 4 KiB page faults and zeroes it — for a 64 MiB output that costs more than the op
// itself. Small blocks go through glibc's memalign path, which is slow next to a vectorised
// loop over a few hundred floats. So, like PyTorch's CUDA caching allocator (and its
// CachingHostAllocator for pinned memory), ember keeps freed CPU blocks and hands them out
// again:
//
//   * size classes: a request is rounded up to its class (64-byte steps up to 512 bytes,
//     then 8 classes per power of two, so at most 12.5 % is wasted); a freed block waits in
//     its class's list and the next request of that class gets it back (last freed, first
//     reused: its cache lines are the likeliest to be warm);
//   * bounded: the cached (free, kept) bytes never exceed the limit (set_cache_limit,
//     EMBER_CPU_CACHE_LIMIT); freeing past it first returns the least recently freed blocks
//     to the system; a block larger than the limit is never kept;
//   * empty_cache() returns every cached block (as torch.cuda.empty_cache() does on a GPU);
//     an allocation that fails empties the cache and tries once more before it throws;
//   * thread-safe (one mutex; the DataLoader's workers allocate batches on their threads);
//   * blocks of 4 MiB and more are 2 MiB-aligned and advised as transparent huge pages, so
//     even the first touch of fresh memory faults once per 2 MiB instead of once per 4 KiB
//     (EMBER_CPU_HUGEPAGES=0 turns that off).
//
// Sanitizers: in an AddressSanitizer build caching is off by default, so ASan's own
// allocator sees every malloc and free and reports a use-after-free with both stacks.
// When a test turns caching on there (set_cache_limit), every cached block is poisoned
// with ASan's manual poisoning API until it is handed out again, and the unused tail of a
// block past the requested size stays poisoned: touching either is still reported.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ember::cpu {

struct CpuMemoryStats {
  std::size_t allocated_bytes = 0;      // in live blocks (size classes, so >= what was asked)
  std::size_t max_allocated_bytes = 0;  // peak of the above
  std::size_t cached_bytes = 0;         // freed blocks kept for reuse
  std::size_t cached_blocks = 0;
  std::uint64_t cache_hits = 0;         // allocations served from the cache
  std::uint64_t cache_misses = 0;       // allocations that went to the system
  std::uint64_t evictions = 0;          // cached blocks returned to the system to stay under the limit
};

// Returns every cached (free) block to the system. Live tensors are untouched.
void empty_cache();
// The most bytes the cache keeps. 0 turns caching off (after emptying the cache). The
// default is min(1/8 of physical memory, 4 GiB), or EMBER_CPU_CACHE_LIMIT (bytes, with an
// optional K/M/G suffix, binary) when set; 0 under AddressSanitizer unless the variable is set.
void set_cache_limit(std::size_t bytes);
std::size_t cache_limit();
CpuMemoryStats memory_stats();
void reset_peak_memory_stats();

// The block size a request of nbytes gets (its size class); exposed for tests and docs.
std::size_t allocation_size(std::size_t nbytes);

}  // namespace ember::cpu
