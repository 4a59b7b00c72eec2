// cuda/caching_allocator.h — the bookkeeping of the CUDA caching allocator, in plain C++.
//
// cudaMalloc/cudaFree are slow (they synchronise the device), and a training step frees
// and re-allocates the same sizes every iteration. So, like PyTorch's allocator, ember
// keeps freed blocks and hands them out again:
//   * sizes round up to multiples of 512 bytes (kMinBlockSize), so near sizes share blocks;
//   * requests ≤ 1 MiB are "small": they are carved from 2 MiB segments; larger requests
//     get their own segment rounded up to 2 MiB. Small and large blocks live in separate
//     pools so a tiny tensor never pins a huge segment;
//   * a free block is found best-fit (smallest that fits) among free blocks of the same
//     stream (a block freed on stream S may still be in use by S's queued kernels, so only
//     S may reuse it without an event); a bigger block is split and the rest stays free;
//   * a freed block merges with free neighbours of its segment (no fragmentation creep);
//   * when the device source reports out-of-memory, empty_cache() returns every fully free
//     segment and the allocation is retried once before failing with PyTorch's message.
// The device memory itself comes from a DeviceMemorySource: cudaMalloc in the real backend
// (cuda_allocator.cpp), a fake in tests/cuda/test_caching_allocator.cpp. Docs: docs/cuda.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <tuple>
#include <unordered_map>

#include <ember/core/error.h>

namespace ember::cuda {

// Where segments come from. allocate returns nullptr when the device is out of memory.
// release should not throw: it runs from destructors, also at process exit while the CUDA
// runtime is shutting down (cuda_allocator.cpp's source drops errors there). The core
// copes with one that does throw all the same (release_all, release_free_segments).
class DeviceMemorySource {
 public:
  virtual ~DeviceMemorySource() = default;
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void release(void* pointer, std::size_t bytes) = 0;
};

struct AllocatorStats {
  std::size_t allocated = 0;      // bytes in blocks handed out (rounded sizes)
  std::size_t max_allocated = 0;  // peak of `allocated` since the last reset
  std::size_t reserved = 0;       // bytes in segments obtained from the source
  std::size_t segments = 0;
  std::size_t source_allocations = 0;  // how often the source was asked (cache misses)
};

class CachingAllocatorCore {
 public:
  static constexpr std::size_t kMinBlockSize = 512;
  static constexpr std::size_t kSmallRequest = 1 << 20;  // ≤ 1 MiB: small pool
  static constexpr std::size_t kSmallSegment = 2 << 20;  // small blocks come from 2 MiB segments
  static constexpr std::size_t kLargeRounding = 2 << 20;

  explicit CachingAllocatorCore(DeviceMemorySource& source) : source_(source) {}
  // Never throws (a destructor that throws is std::terminate): see release_all.
  ~CachingAllocatorCore() noexcept { release_all(); }
  CachingAllocatorCore(const CachingAllocatorCore&) = delete;
  CachingAllocatorCore& operator=(const CachingAllocatorCore&) = delete;

  static std::size_t round_size(std::size_t bytes) {
    if (bytes < kMinBlockSize) return kMinBlockSize;
    return (bytes + kMinBlockSize - 1) / kMinBlockSize * kMinBlockSize;
  }
  static std::size_t segment_size(std::size_t rounded) {
    if (rounded <= kSmallRequest) return kSmallSegment;
    return (rounded + kLargeRounding - 1) / kLargeRounding * kLargeRounding;
  }

  // nbytes 0 gives nullptr (a valid "no memory" pointer, like PyTorch's empty tensors).
  void* allocate(std::size_t nbytes, const void* stream = nullptr) {
    if (nbytes == 0) return nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
    const std::size_t size = round_size(nbytes);
    const bool small = size <= kSmallRequest;
    Block* block = take_free_block(size, small, stream);
    if (block == nullptr) block = new_segment(size, small, stream, nbytes);
    block = split(block, size, small);
    block->allocated = true;
    allocated_blocks_[block->pointer] = block;
    stats_.allocated += block->size;
    if (stats_.allocated > stats_.max_allocated) stats_.max_allocated = stats_.allocated;
    return block->pointer;
  }

  void deallocate(void* pointer) {
    if (pointer == nullptr) return;
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = allocated_blocks_.find(pointer);
    EMBER_CHECK(found != allocated_blocks_.end(), Error,
                "CUDA caching allocator: free of a pointer it did not allocate");
    Block* block = found->second;
    allocated_blocks_.erase(found);
    block->allocated = false;
    stats_.allocated -= block->size;
    if (block->prev != nullptr && !block->prev->allocated) block = absorb(block->prev, block);
    if (block->next != nullptr && !block->next->allocated) block = absorb(block, block->next);
    free_blocks(block->small).insert(block);
  }

  // Returns every segment that is entirely free to the source (torch.cuda.empty_cache).
  void empty_cache() {
    std::lock_guard<std::mutex> lock(mutex_);
    release_free_segments();
  }

  AllocatorStats stats() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return stats_;
  }
  void reset_peak() {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.max_allocated = stats_.allocated;
  }
  // The size of the block behind a live pointer (tests look at rounding with it).
  std::size_t block_size(void* pointer) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = allocated_blocks_.find(pointer);
    return found == allocated_blocks_.end() ? 0 : found->second->size;
  }

 private:
  // A contiguous piece of a segment; segments are doubly linked lists of blocks.
  struct Block {
    char* pointer = nullptr;
    std::size_t size = 0;
    const void* stream = nullptr;
    bool small = false;
    bool allocated = false;
    Block* prev = nullptr;
    Block* next = nullptr;
    char* segment = nullptr;  // start of the segment this block belongs to
  };
  // Free blocks ordered by (stream, size, address): lower_bound finds the best fit.
  struct BlockOrder {
    bool operator()(const Block* a, const Block* b) const {
      return std::make_tuple(a->stream, a->size, a->pointer) < std::make_tuple(b->stream, b->size, b->pointer);
    }
  };
  using FreeSet = std::set<Block*, BlockOrder>;

  FreeSet& free_blocks(bool small) { return small ? small_free_ : large_free_; }

  Block* take_free_block(std::size_t size, bool small, const void* stream) {
    FreeSet& pool = free_blocks(small);
    Block key;
    key.stream = stream;
    key.size = size;
    auto found = pool.lower_bound(&key);
    if (found == pool.end() || (*found)->stream != stream) return nullptr;
    Block* block = *found;
    pool.erase(found);
    return block;
  }

  Block* new_segment(std::size_t size, bool small, const void* stream, std::size_t requested) {
    const std::size_t bytes = segment_size(size);
    void* memory = source_.allocate(bytes);
    if (memory == nullptr) {  // free what the cache holds, then try once more
      release_free_segments();
      memory = source_.allocate(bytes);
    }
    EMBER_CHECK(memory != nullptr, Error, "CUDA out of memory. Tried to allocate ", format_mib(requested),
                " (", format_mib(stats_.allocated), " already allocated; ", format_mib(stats_.reserved),
                " reserved in total by ember)");
    ++stats_.source_allocations;
    ++stats_.segments;
    stats_.reserved += bytes;
    auto owned = std::make_unique<Block>();
    Block* block = owned.get();
    block->pointer = static_cast<char*>(memory);
    block->segment = block->pointer;
    block->size = bytes;
    block->stream = stream;
    block->small = small;
    blocks_.emplace(block, std::move(owned));
    segment_sizes_[block->segment] = bytes;
    return block;
  }

  // Cuts `block` down to `size`; the remainder goes back to the free pool. A small-pool
  // remainder is kept from 512 bytes, a large one only from 1 MiB (smaller large
  // remainders would just fragment the big segment).
  Block* split(Block* block, std::size_t size, bool small) {
    const std::size_t remaining = block->size - size;
    const std::size_t threshold = small ? kMinBlockSize : kSmallRequest;
    if (remaining < threshold) return block;
    auto owned = std::make_unique<Block>();
    Block* rest = owned.get();
    rest->pointer = block->pointer + size;
    rest->size = remaining;
    rest->stream = block->stream;
    rest->small = block->small;
    rest->segment = block->segment;
    rest->prev = block;
    rest->next = block->next;
    if (block->next != nullptr) block->next->prev = rest;
    block->next = rest;
    block->size = size;
    blocks_.emplace(rest, std::move(owned));
    free_blocks(rest->small).insert(rest);
    return block;
  }

  // Joins two free neighbours (first directly before second) into `first`. Both leave the
  // free set *before* first's size changes, because the set is ordered by size.
  Block* absorb(Block* first, Block* second) {
    free_blocks(first->small).erase(first);   // no-op for the block being freed now
    free_blocks(second->small).erase(second);
    first->size += second->size;
    first->next = second->next;
    if (second->next != nullptr) second->next->prev = first;
    blocks_.erase(second);
    return first;
  }

  void release_free_segments() {
    for (FreeSet* pool : {&small_free_, &large_free_}) {
      for (auto it = pool->begin(); it != pool->end();) {
        Block* block = *it;
        const bool whole_segment = block->prev == nullptr && block->next == nullptr;
        if (!whole_segment) {
          ++it;
          continue;
        }
        // Released first, forgotten after: a release that throws leaves the segment cached
        // and counted, so the bookkeeping stays true and a later empty_cache may retry.
        source_.release(block->segment, block->size);
        it = pool->erase(it);
        stats_.reserved -= block->size;
        --stats_.segments;
        segment_sizes_.erase(block->segment);
        blocks_.erase(block);
      }
    }
  }

  // Every segment back to the source, from the destructor — which runs at process exit,
  // when the CUDA runtime may already be unloading and a source could throw: one failed
  // release is dropped and the others still happen, and nothing escapes.
  void release_all() noexcept {
    for (auto& [segment, bytes] : segment_sizes_) {
      try {
        source_.release(segment, bytes);
      } catch (...) {  // nothing to report to at shutdown; the process frees its memory anyway
      }
    }
    segment_sizes_.clear();
  }

  static std::string format_mib(std::size_t bytes) {
    return make_message(static_cast<double>(bytes) / (1024.0 * 1024.0), " MiB");
  }

  DeviceMemorySource& source_;
  mutable std::mutex mutex_;
  FreeSet small_free_, large_free_;
  std::unordered_map<Block*, std::unique_ptr<Block>> blocks_;
  std::unordered_map<void*, Block*> allocated_blocks_;
  std::map<char*, std::size_t> segment_sizes_;
  AllocatorStats stats_;
};

}  // namespace ember::cuda
