// tests/cuda/test_caching_allocator.cpp — the caching allocator's bookkeeping
// (cuda/caching_allocator.h) on the CPU, with a fake device-memory source.
//
// The fake hands out host memory and counts calls, so the tests can see exactly when the
// cache is hit (no new segment), when blocks are split and merged, and what empty_cache
// and the out-of-memory retry give back.
#include <cstdlib>
#include <map>
#include <vector>

#include "cuda_test_support.h"

#include <ember/cuda/caching_allocator.h>

namespace {

using ember::cuda::CachingAllocatorCore;

class FakeDeviceMemory final : public ember::cuda::DeviceMemorySource {
 public:
  std::size_t limit = std::size_t(1) << 40;  // bytes the "device" has
  std::size_t in_use = 0;
  int allocations = 0, releases = 0;
  std::map<void*, std::size_t> live;

  void* allocate(std::size_t bytes) override {
    if (in_use + bytes > limit) return nullptr;
    void* p = std::malloc(bytes);
    live[p] = bytes;
    in_use += bytes;
    ++allocations;
    return p;
  }
  void release(void* pointer, std::size_t bytes) override {
    REQUIRE(live.at(pointer) == bytes);
    live.erase(pointer);
    in_use -= bytes;
    ++releases;
    std::free(pointer);
  }
};

constexpr std::size_t kMiB = 1 << 20;

}  // namespace

TEST_CASE("caching allocator: sizes round up to 512-byte classes and segments to 2 MiB", "[cuda][allocator]") {
  REQUIRE(CachingAllocatorCore::round_size(1) == 512);
  REQUIRE(CachingAllocatorCore::round_size(512) == 512);
  REQUIRE(CachingAllocatorCore::round_size(513) == 1024);
  REQUIRE(CachingAllocatorCore::segment_size(512) == 2 * kMiB);
  REQUIRE(CachingAllocatorCore::segment_size(kMiB) == 2 * kMiB);
  REQUIRE(CachingAllocatorCore::segment_size(kMiB + 512) == 2 * kMiB);
  REQUIRE(CachingAllocatorCore::segment_size(5 * kMiB) == 6 * kMiB);
}

TEST_CASE("caching allocator: small blocks are carved from one segment and reused after free",
          "[cuda][allocator]") {
  FakeDeviceMemory device;
  CachingAllocatorCore allocator(device);
  REQUIRE(allocator.allocate(0) == nullptr);
  void* a = allocator.allocate(1000);
  void* b = allocator.allocate(3000);
  REQUIRE(device.allocations == 1);  // both from the first 2 MiB segment
  REQUIRE(static_cast<char*>(b) - static_cast<char*>(a) == 1024);
  REQUIRE(allocator.block_size(b) == 3072);
  REQUIRE(allocator.stats().allocated == 1024 + 3072);
  REQUIRE(allocator.stats().reserved == 2 * kMiB);
  allocator.deallocate(a);
  REQUIRE(allocator.stats().allocated == 3072);
  void* again = allocator.allocate(700);  // best fit: the 1024-byte hole a left
  REQUIRE(again == a);
  REQUIRE(device.allocations == 1);
  allocator.deallocate(again);
  allocator.deallocate(b);
  REQUIRE(allocator.stats().allocated == 0);
  REQUIRE(allocator.stats().max_allocated == 1024 + 3072);
  REQUIRE(allocator.stats().reserved == 2 * kMiB);  // cached, not returned
}

TEST_CASE("caching allocator: freed neighbours merge back into one block", "[cuda][allocator]") {
  FakeDeviceMemory device;
  CachingAllocatorCore allocator(device);
  void* a = allocator.allocate(512);
  void* b = allocator.allocate(512);
  void* c = allocator.allocate(512);
  allocator.deallocate(a);
  allocator.deallocate(c);
  allocator.deallocate(b);  // merges with both sides: the segment is whole again
  void* whole = allocator.allocate(kMiB);  // the largest small request, from the merged block
  REQUIRE(whole == a);
  REQUIRE(device.allocations == 1);
  allocator.deallocate(whole);
  allocator.empty_cache();
  REQUIRE(device.releases == 1);  // fully free again after merging
  REQUIRE(allocator.stats().reserved == 0);
}

TEST_CASE("caching allocator: large requests get their own segments and empty_cache returns them",
          "[cuda][allocator]") {
  FakeDeviceMemory device;
  CachingAllocatorCore allocator(device);
  void* big = allocator.allocate(5 * kMiB);
  void* small = allocator.allocate(100);
  REQUIRE(device.allocations == 2);  // separate pools
  REQUIRE(allocator.stats().reserved == 6 * kMiB + 2 * kMiB);
  allocator.deallocate(big);
  void* reuse = allocator.allocate(4 * kMiB + 1);  // fits the cached 6 MiB block
  REQUIRE(reuse == big);
  REQUIRE(device.allocations == 2);
  allocator.deallocate(reuse);
  allocator.empty_cache();  // big's segment is free; small's is not
  REQUIRE(device.releases == 1);
  REQUIRE(allocator.stats().reserved == 2 * kMiB);
  allocator.deallocate(small);
}

TEST_CASE("caching allocator: blocks are reused only on the stream that freed them", "[cuda][allocator]") {
  FakeDeviceMemory device;
  CachingAllocatorCore allocator(device);
  int stream_a = 0, stream_b = 0;
  void* p = allocator.allocate(2048, &stream_a);
  allocator.deallocate(p);
  void* q = allocator.allocate(2048, &stream_b);
  REQUIRE(q != p);
  REQUIRE(device.allocations == 2);
  void* r = allocator.allocate(2048, &stream_a);
  REQUIRE(r == p);
  allocator.deallocate(q);
  allocator.deallocate(r);
}

TEST_CASE("caching allocator: out of memory frees the cache, retries, then fails with PyTorch's message",
          "[cuda][allocator]") {
  FakeDeviceMemory device;
  device.limit = 8 * kMiB;
  CachingAllocatorCore allocator(device);
  void* a = allocator.allocate(6 * kMiB);
  allocator.deallocate(a);  // cached: the device is now "full"
  void* b = allocator.allocate(7 * kMiB + 1);  // needs 8 MiB: succeeds only after the retry
  REQUIRE(b != nullptr);
  REQUIRE(device.releases == 1);
  REQUIRE_THROWS_AS(allocator.allocate(3 * kMiB), ember::Error);
  REQUIRE_THROWS_WITH(allocator.allocate(3 * kMiB), Catch::StartsWith("CUDA out of memory. Tried to allocate 3 MiB"));
  allocator.deallocate(b);
  REQUIRE_THROWS_WITH(allocator.deallocate(&device), Catch::Contains("did not allocate"));
}

TEST_CASE("caching allocator: peak statistics reset to the current use", "[cuda][allocator]") {
  FakeDeviceMemory device;
  CachingAllocatorCore allocator(device);
  void* a = allocator.allocate(4096);
  void* b = allocator.allocate(4096);
  allocator.deallocate(b);
  REQUIRE(allocator.stats().max_allocated == 8192);
  allocator.reset_peak();
  REQUIRE(allocator.stats().max_allocated == 4096);
  allocator.deallocate(a);
}

TEST_CASE("caching allocator: the destructor returns every segment", "[cuda][allocator]") {
  FakeDeviceMemory device;
  {
    CachingAllocatorCore allocator(device);
    allocator.allocate(100);
    allocator.allocate(3 * kMiB);
  }
  REQUIRE(device.live.empty());
}

namespace {
// A device whose release fails, as cudaFree / cudaGetDevice do while the CUDA runtime
// unloads at process exit (cudaErrorCudartUnloading). Frees what it still holds itself.
class ShuttingDownDeviceMemory final : public ember::cuda::DeviceMemorySource {
 public:
  bool failing = true;
  int release_attempts = 0;
  std::map<void*, std::size_t> live;
  ~ShuttingDownDeviceMemory() override {
    for (auto& [pointer, bytes] : live) std::free(pointer);
  }
  void* allocate(std::size_t bytes) override {
    void* p = std::malloc(bytes);
    live[p] = bytes;
    return p;
  }
  void release(void* pointer, std::size_t) override {
    ++release_attempts;
    if (failing) throw ember::DeviceError("CUDA error: driver shutting down (cudaGetDevice(&previous_))");
    live.erase(pointer);
    std::free(pointer);
  }
};
}  // namespace

TEST_CASE("caching allocator: a release that fails at shutdown neither escapes the destructor nor stops the rest",
          "[cuda][allocator]") {
  // Before: the exception left ~CachingAllocatorCore (noexcept) and the process terminated.
  ShuttingDownDeviceMemory device;
  {
    CachingAllocatorCore allocator(device);
    allocator.allocate(100);          // a small segment
    allocator.allocate(3 * kMiB);     // a large one
    allocator.allocate(5 * kMiB);     // and another
    REQUIRE(allocator.stats().segments == 3);
  }
  REQUIRE(device.release_attempts == 3);  // every segment was still offered back
}

TEST_CASE("caching allocator: empty_cache whose release fails keeps the segment cached and counted",
          "[cuda][allocator]") {
  ShuttingDownDeviceMemory device;
  CachingAllocatorCore allocator(device);
  allocator.deallocate(allocator.allocate(3 * kMiB));
  REQUIRE(allocator.stats().reserved == 4 * kMiB);
  REQUIRE_THROWS_WITH(allocator.empty_cache(), "CUDA error: driver shutting down (cudaGetDevice(&previous_))");
  REQUIRE(allocator.stats().reserved == 4 * kMiB);
  REQUIRE(allocator.stats().segments == 1);
  device.failing = false;
  allocator.empty_cache();  // the same segment, released now
  REQUIRE(allocator.stats().reserved == 0);
  REQUIRE(device.live.empty());
  void* again = allocator.allocate(3 * kMiB);  // and the allocator still works
  REQUIRE(again != nullptr);
  allocator.deallocate(again);
}
