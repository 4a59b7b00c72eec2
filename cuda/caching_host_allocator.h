// cuda/caching_host_allocator.h — the bookkeeping of the pinned (page-locked) host memory
// cache, in plain C++ (PyTorch's CachingHostAllocator is the model).
//
// cudaHostAlloc and cudaFreeHost are slow (the pages are locked and mapped for the device,
// and freeing synchronises), yet DataLoader(pin_memory=True) pins a fresh batch of the same
// size every step. So freed pinned blocks are kept and handed out again — but a block is
// only reusable once the device has finished reading it: a non_blocking host->device copy
// (core/copy.cpp) is merely queued when the tensor that owns the block dies. Each such copy
// records an event on its stream against the block (record_use); a freed block waits in
// `pending_` until all its events have completed, then joins the free lists. No device-wide
// synchronisation anywhere, and other devices' work is never waited for.
//   * sizes round up to a power of two (at least kMinBlockSize): a block serves any request
//     of its size class, and the classes stay few;
//   * the events are polled at each allocate (and empty_cache), never waited on;
//   * empty_cache returns free blocks to the source; the destructor returns every block and
//     never throws (it runs at process exit, when the CUDA runtime may be unloading).
// The memory and the events come from a HostMemorySource: cudaHostAlloc and cudaEvent* in
// the real backend (cuda_allocator.cpp), a fake in tests/cuda/test_caching_host_allocator.cpp.
// Docs: docs/cuda.md ("Pinned memory").
#pragma once

#include <cstddef>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include <ember/core/error.h>

namespace ember::cuda {

// Pinned memory and stream events, as opaque pointers (a stream is a cudaStream_t, an
// event a cudaEvent_t in the real source). release and destroy_event must not throw.
class HostMemorySource {
 public:
  virtual ~HostMemorySource() = default;
  virtual void* allocate(std::size_t bytes) = 0;  // throws when the memory cannot be had
  virtual void release(void* pointer) noexcept = 0;
  virtual void* record_event(void* stream) = 0;  // an event recorded now on `stream`
  virtual bool event_done(void* event) = 0;      // has the device passed it?
  virtual void destroy_event(void* event) noexcept = 0;
};

struct HostAllocatorStats {
  std::size_t allocated = 0;           // bytes in blocks handed out (rounded sizes)
  std::size_t reserved = 0;            // bytes in all blocks obtained from the source
  std::size_t blocks = 0;              // blocks obtained from the source and not yet released
  std::size_t source_allocations = 0;  // how often the source was asked (cache misses)
  std::size_t pending = 0;             // freed blocks still waiting for their events
};

class CachingHostAllocatorCore {
 public:
  static constexpr std::size_t kMinBlockSize = 512;

  explicit CachingHostAllocatorCore(HostMemorySource& source) : source_(source) {}
  ~CachingHostAllocatorCore() noexcept { release_all(); }
  CachingHostAllocatorCore(const CachingHostAllocatorCore&) = delete;
  CachingHostAllocatorCore& operator=(const CachingHostAllocatorCore&) = delete;

  static std::size_t round_size(std::size_t bytes) {
    std::size_t size = kMinBlockSize;
    while (size < bytes) size *= 2;
    return size;
  }

  void* allocate(std::size_t nbytes) {
    if (nbytes == 0) return nullptr;
    const std::size_t size = round_size(nbytes);
    std::lock_guard<std::mutex> lock(mutex_);
    process_events();
    auto free = free_.find(size);
    Block* block = nullptr;
    if (free != free_.end()) {
      block = free->second;
      free_.erase(free);
    } else {
      void* memory = source_.allocate(size);
      auto owned = std::make_unique<Block>();
      owned->pointer = static_cast<char*>(memory);
      owned->size = size;
      block = owned.get();
      blocks_.emplace(owned->pointer, std::move(owned));
      stats_.reserved += size;
      ++stats_.blocks;
      ++stats_.source_allocations;
    }
    block->allocated = true;
    stats_.allocated += block->size;
    return block->pointer;
  }

  // The block becomes reusable once every event recorded against it has completed.
  void deallocate(void* pointer) {
    if (pointer == nullptr) return;
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = blocks_.find(static_cast<char*>(pointer));
    EMBER_CHECK(found != blocks_.end() && found->second->allocated, Error,
                "CUDA caching host allocator: free of a pointer it did not allocate");
    Block* block = found->second.get();
    block->allocated = false;
    stats_.allocated -= block->size;
    if (block->events.empty()) {
      free_.emplace(block->size, block);
    } else {
      pending_.push_back(block);
      ++stats_.pending;
    }
  }

  // A copy that reads or writes `pointer` (anywhere inside a live block) was queued on
  // `stream`: the block is not reused before the device gets past that point. Returns
  // false (and records nothing) for memory this allocator does not own.
  bool record_use(const void* pointer, void* stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    Block* block = containing_block(pointer);
    if (block == nullptr || !block->allocated) return false;
    block->events.push_back(source_.record_event(stream));
    return true;
  }

  // Is `pointer` inside a block this allocator handed out?
  bool owns(const void* pointer) const {
    std::lock_guard<std::mutex> lock(mutex_);
    const Block* block = containing_block(pointer);
    return block != nullptr && block->allocated;
  }

  // Returns every free block (whose events completed) to the source.
  void empty_cache() {
    std::lock_guard<std::mutex> lock(mutex_);
    process_events();
    for (auto& [size, block] : free_) {
      source_.release(block->pointer);
      stats_.reserved -= block->size;
      --stats_.blocks;
      blocks_.erase(block->pointer);
    }
    free_.clear();
  }

  HostAllocatorStats stats() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return stats_;
  }

 private:
  struct Block {
    char* pointer = nullptr;
    std::size_t size = 0;
    bool allocated = false;
    std::vector<void*> events;  // recorded by record_use, not yet seen completed
  };

  Block* containing_block(const void* pointer) const {
    const char* at = static_cast<const char*>(pointer);
    auto after = blocks_.upper_bound(const_cast<char*>(at));
    if (after == blocks_.begin()) return nullptr;
    Block* block = std::prev(after)->second.get();
    return at < block->pointer + block->size ? block : nullptr;
  }

  // Drops the completed events of every block (allocated or pending); a pending block
  // whose events are all done joins the free lists.
  void process_events() {
    for (auto& [pointer, block] : blocks_) {
      auto& events = block->events;
      for (auto it = events.begin(); it != events.end();) {
        if (source_.event_done(*it)) {
          source_.destroy_event(*it);
          it = events.erase(it);
        } else {
          ++it;
        }
      }
    }
    for (auto it = pending_.begin(); it != pending_.end();) {
      if ((*it)->events.empty()) {
        free_.emplace((*it)->size, *it);
        it = pending_.erase(it);
        --stats_.pending;
      } else {
        ++it;
      }
    }
  }

  // Every block back, every event destroyed; the source's release never throws.
  void release_all() noexcept {
    for (auto& [pointer, block] : blocks_) {
      for (void* event : block->events) source_.destroy_event(event);
      source_.release(pointer);
    }
    blocks_.clear();
    free_.clear();
    pending_.clear();
  }

  HostMemorySource& source_;
  mutable std::mutex mutex_;
  std::map<char*, std::unique_ptr<Block>> blocks_;  // every block, by address (record_use looks inside)
  std::multimap<std::size_t, Block*> free_;         // reusable now, by size class
  std::vector<Block*> pending_;                     // freed, waiting for events
  HostAllocatorStats stats_;
};

}  // namespace ember::cuda
