// core/small_object_pool.cpp — the per-thread free lists behind make_pooled (why: the header).
#include <ember/core/small_object_pool.h>

#include <ember/core/address_sanitizer.h>

#include <cstdint>
#include <new>

namespace ember::detail {

#if !EMBER_ADDRESS_SANITIZER  // under AddressSanitizer every block goes to operator new and delete
namespace {

constexpr std::size_t kClassBytes = 16;     // size classes 16, 32, ..., 512 bytes
constexpr std::size_t kMaxPooledBytes = 512;
constexpr std::size_t kClasses = kMaxPooledBytes / kClassBytes;
// Per class and thread. A training step's graph frees ~50 blocks of one class at once; the
// bound keeps a thread that once freed a huge graph from holding its blocks forever.
constexpr std::uint32_t kMaxBlocksPerClass = 512;

struct FreeBlock {
  FreeBlock* next;
};

// Plain data, so that reaching it costs no thread_local initialisation check; the lists are
// handed back by `Releaser` when the thread ends.
struct Lists {
  FreeBlock* heads[kClasses];
  std::uint32_t counts[kClasses];
  bool registered;  // the Releaser exists
  bool closed;      // the thread is ending: allocate and free directly from now on
};
thread_local Lists lists{};

struct Releaser {
  ~Releaser() {
    for (std::size_t c = 0; c < kClasses; ++c) {
      while (FreeBlock* block = lists.heads[c]) {
        lists.heads[c] = block->next;
        ::operator delete(block);
      }
      lists.counts[c] = 0;
    }
    lists.closed = true;  // tensors freed later on this thread (thread_local destructors) still work
  }
};

std::size_t class_of(std::size_t nbytes) { return (nbytes + kClassBytes - 1) / kClassBytes - 1; }

}  // namespace
#endif

void* pool_allocate(std::size_t nbytes) {
#if !EMBER_ADDRESS_SANITIZER
  if (nbytes != 0 && nbytes <= kMaxPooledBytes) {
    const std::size_t c = class_of(nbytes);
    if (FreeBlock* block = lists.heads[c]) {
      lists.heads[c] = block->next;
      --lists.counts[c];
      return block;
    }
    return ::operator new((c + 1) * kClassBytes);  // the class's full size: any later user fits
  }
#endif
  return ::operator new(nbytes);
}

void pool_deallocate(void* block, [[maybe_unused]] std::size_t nbytes) noexcept {
#if !EMBER_ADDRESS_SANITIZER
  if (nbytes != 0 && nbytes <= kMaxPooledBytes && !lists.closed) {
    if (!lists.registered) {
      lists.registered = true;
      thread_local Releaser releaser;  // constructed here, once per thread
      (void)releaser;
    }
    const std::size_t c = class_of(nbytes);
    if (lists.counts[c] < kMaxBlocksPerClass) {
      auto* free_block = static_cast<FreeBlock*>(block);
      free_block->next = lists.heads[c];
      lists.heads[c] = free_block;
      ++lists.counts[c];
      return;
    }
  }
#endif
  ::operator delete(block);
}

bool pool_enabled() noexcept {
#if EMBER_ADDRESS_SANITIZER
  return false;
#else
  return true;
#endif
}

}  // namespace ember::detail
