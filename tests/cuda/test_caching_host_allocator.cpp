// tests/cuda/test_caching_host_allocator.cpp — the pinned host memory cache
// (cuda/caching_host_allocator.h) on a fake source, no GPU needed: blocks are reused by
// size class, a block a queued copy still reads waits for that copy's event (and only for
// it), empty_cache and the destructor return everything, and nothing throws at shutdown.
#include <cstdlib>
#include <map>
#include <set>

#include "cuda_test_support.h"

#include <ember/cuda/caching_host_allocator.h>

namespace {

using ember::cuda::CachingHostAllocatorCore;

// Pinned memory from malloc; an event is a number whose completion the test decides.
class FakePinnedMemory final : public ember::cuda::HostMemorySource {
 public:
  std::map<void*, bool> live;  // pointer -> still held
  int allocations = 0, releases = 0, events_recorded = 0, events_destroyed = 0;
  std::map<long, bool> events;       // event id -> done
  std::map<long, void*> event_stream;

  ~FakePinnedMemory() override {
    for (auto& [pointer, held] : live) std::free(pointer);
  }
  void* allocate(std::size_t bytes) override {
    void* p = std::malloc(bytes);
    live[p] = true;
    ++allocations;
    return p;
  }
  void release(void* pointer) noexcept override {
    live.erase(pointer);
    std::free(pointer);
    ++releases;
  }
  void* record_event(void* stream) override {
    const long id = ++events_recorded;
    events[id] = false;
    event_stream[id] = stream;
    return reinterpret_cast<void*>(id);
  }
  bool event_done(void* event) override { return events.at(reinterpret_cast<long>(event)); }
  void destroy_event(void* event) noexcept override {
    events.erase(reinterpret_cast<long>(event));
    ++events_destroyed;
  }
  void complete_all() {
    for (auto& [id, done] : events) done = true;
  }
};

void* const kStream = reinterpret_cast<void*>(0x5);

}  // namespace

TEST_CASE("caching host allocator: sizes round up to powers of two and freed blocks are reused", "[cuda][pinned]") {
  REQUIRE(CachingHostAllocatorCore::round_size(1) == 512);
  REQUIRE(CachingHostAllocatorCore::round_size(512) == 512);
  REQUIRE(CachingHostAllocatorCore::round_size(513) == 1024);
  REQUIRE(CachingHostAllocatorCore::round_size(100000) == 131072);
  FakePinnedMemory memory;
  CachingHostAllocatorCore allocator(memory);
  void* a = allocator.allocate(1000);
  allocator.deallocate(a);
  void* b = allocator.allocate(900);  // the same 1024-byte class: the same block, no new pinning
  REQUIRE(b == a);
  REQUIRE(memory.allocations == 1);
  void* c = allocator.allocate(3000);  // another class: a new block
  REQUIRE(c != a);
  REQUIRE(memory.allocations == 2);
  REQUIRE(allocator.stats().allocated == 1024 + 4096);
  REQUIRE(allocator.stats().reserved == 1024 + 4096);
  allocator.deallocate(b);
  allocator.deallocate(c);
  REQUIRE(allocator.stats().allocated == 0);
}

TEST_CASE("caching host allocator: a block a queued copy reads is reused only after the copy's event",
          "[cuda][pinned]") {
  FakePinnedMemory memory;
  CachingHostAllocatorCore allocator(memory);
  char* batch = static_cast<char*>(allocator.allocate(4096));
  // A non_blocking copy from the middle of the block (a view) was queued on kStream.
  REQUIRE(allocator.record_use(batch + 100, kStream));
  REQUIRE(memory.event_stream.at(1) == kStream);
  allocator.deallocate(batch);  // the tensor died; the device may still be reading
  REQUIRE(allocator.stats().pending == 1);
  void* next = allocator.allocate(4096);
  REQUIRE(next != batch);  // not handed out while the copy may be running
  REQUIRE(memory.allocations == 2);
  memory.complete_all();  // the copy finished
  allocator.deallocate(next);
  void* reused = allocator.allocate(4096);
  REQUIRE((reused == batch || reused == next));
  REQUIRE(memory.allocations == 2);
  REQUIRE(allocator.stats().pending == 0);
  REQUIRE(memory.events_destroyed == 1);  // every recorded event is destroyed once seen done
  allocator.deallocate(reused);
}

TEST_CASE("caching host allocator: record_use ignores memory it does not own", "[cuda][pinned]") {
  FakePinnedMemory memory;
  CachingHostAllocatorCore allocator(memory);
  char* block = static_cast<char*>(allocator.allocate(512));
  int pageable = 0;
  REQUIRE_FALSE(allocator.record_use(&pageable, kStream));
  REQUIRE_FALSE(allocator.record_use(block + 512, kStream));  // one past the block
  REQUIRE(allocator.owns(block + 511));
  REQUIRE_FALSE(allocator.owns(&pageable));
  REQUIRE(memory.events_recorded == 0);
  allocator.deallocate(block);
  REQUIRE_FALSE(allocator.record_use(block, kStream));  // freed: nobody may queue copies from it
  REQUIRE_THROWS_WITH(allocator.deallocate(block), "CUDA caching host allocator: free of a pointer it did not allocate");
}

TEST_CASE("caching host allocator: empty_cache returns free blocks, not those still being read", "[cuda][pinned]") {
  FakePinnedMemory memory;
  CachingHostAllocatorCore allocator(memory);
  void* idle = allocator.allocate(1024);
  void* busy = allocator.allocate(2048);
  void* held = allocator.allocate(8192);
  allocator.record_use(busy, kStream);
  allocator.deallocate(idle);
  allocator.deallocate(busy);
  allocator.empty_cache();
  REQUIRE(memory.releases == 1);  // idle only: busy waits for its copy, held is in use
  REQUIRE(memory.live.count(busy) == 1);
  REQUIRE(allocator.stats().reserved == 2048 + 8192);
  memory.complete_all();
  allocator.empty_cache();
  REQUIRE(memory.releases == 2);
  REQUIRE(allocator.stats().blocks == 1);
  allocator.deallocate(held);
}

TEST_CASE("caching host allocator: the destructor returns every block and destroys pending events",
          "[cuda][pinned]") {
  FakePinnedMemory memory;
  {
    CachingHostAllocatorCore allocator(memory);
    void* a = allocator.allocate(1024);
    allocator.allocate(4096);  // still held at exit
    allocator.record_use(a, kStream);
    allocator.deallocate(a);
  }
  REQUIRE(memory.live.empty());
  REQUIRE(memory.releases == 2);
  REQUIRE(memory.events_destroyed == memory.events_recorded);
}
