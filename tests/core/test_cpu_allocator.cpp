// tests/core/test_cpu_allocator.cpp — the CPU caching allocator (core/cpu_allocator.h).
//
// What the cache promises: a freed block comes back for the next request of its size
// class, the cached bytes stay under the limit (oldest blocks go first), empty_cache()
// returns everything, several threads may allocate at once, and memory handed out again is
// not assumed to be zero (zeros() still writes its zeros). Under AddressSanitizer a cached
// block and the tail of a block past the requested size stay poisoned. No timings here:
// what the cache buys is measured by benchmarks/cpu_bench.cpp.
#include <catch2/catch.hpp>

#include <thread>
#include <vector>

#include <ember/core/address_sanitizer.h>
#include <ember/core/allocator.h>
#include <ember/core/cpu_allocator.h>
#include <ember/core/factories.h>

#include "test_support.h"

#if EMBER_ADDRESS_SANITIZER
#include <sanitizer/asan_interface.h>
#endif

using namespace ember;

namespace {

// Turns caching on with `limit` for one test (also in an ASan build, where it is off by
// default) and restores the previous limit afterwards.
class CacheLimit {
 public:
  explicit CacheLimit(std::size_t limit) : previous_(cpu::cache_limit()) { cpu::set_cache_limit(limit); }
  ~CacheLimit() { cpu::set_cache_limit(previous_); }
  CacheLimit(const CacheLimit&) = delete;
  CacheLimit& operator=(const CacheLimit&) = delete;

 private:
  std::size_t previous_;
};

constexpr std::size_t kMiB = 1 << 20;

}  // namespace

TEST_CASE("cpu allocator: size classes round up by at most an eighth, in 64-byte steps") {
  std::size_t previous = 0;
  for (std::size_t n : {1ul, 63ul, 64ul, 65ul, 500ul, 512ul, 513ul, 1000ul, 4096ul, 4097ul, 123457ul, 1ul << 20,
                        (1ul << 20) + 1, 3ul << 24, 1ul << 30}) {
    const std::size_t size = cpu::allocation_size(n);
    CHECK(size >= n);
    CHECK(size % kCpuAlignment == 0);
    if (n > 512) CHECK(size - n <= n / 8);  // eight classes per power of two
    CHECK(size >= previous);
    CHECK(cpu::allocation_size(size) == size);  // a class size is its own class
    previous = size;
  }
  CHECK(cpu::allocation_size(513) == 576);
  CHECK(cpu::allocation_size(64 * kMiB) == 64 * kMiB);
  CHECK(cpu::allocation_size(64 * kMiB + 1) == 72 * kMiB);
}

TEST_CASE("cpu allocator: a freed block is handed out again for the same size class") {
  CacheLimit cache(64 * kMiB);
  const cpu::CpuMemoryStats before = cpu::memory_stats();
  void* first = nullptr;
  {
    Tensor t = empty({1000}, kFloat32);
    first = t.data_ptr();
    CHECK(reinterpret_cast<std::uintptr_t>(first) % kCpuAlignment == 0);
    CHECK(cpu::memory_stats().allocated_bytes == before.allocated_bytes + cpu::allocation_size(4000));
  }
  CHECK(cpu::memory_stats().cached_bytes == cpu::allocation_size(4000));
  CHECK(cpu::memory_stats().allocated_bytes == before.allocated_bytes);
  Tensor again = empty({990}, kFloat32);  // 3960 bytes: the same class as 4000
  CHECK(again.data_ptr() == first);
  const cpu::CpuMemoryStats after = cpu::memory_stats();
  CHECK(after.cache_hits == before.cache_hits + 1);
  CHECK(after.cached_bytes == 0);
}

TEST_CASE("cpu allocator: reused memory is not assumed zero; zeros() and ones() still fill it") {
  CacheLimit cache(64 * kMiB);
  void* block = nullptr;
  {
    Tensor dirty = full({4096}, 7.0, TensorOptions().dtype(kFloat32));
    block = dirty.data_ptr();
  }
  Tensor zero = zeros({4096}, TensorOptions().dtype(kFloat32));
  CHECK(zero.data_ptr() == block);
  for (std::int64_t i = 0; i < zero.numel(); ++i) REQUIRE(zero.data_ptr<float>()[i] == 0.0f);
}

TEST_CASE("cpu allocator: the cache stays under its limit, least recently freed blocks first") {
  CacheLimit cache(1 * kMiB);
  const std::uint64_t evictions_before = cpu::memory_stats().evictions;
  void* oldest = nullptr;
  void* newest = nullptr;
  {
    Tensor a = empty({100 * 1024}, kFloat32);  // 400 KiB each: two fit under 1 MiB, three do not
    Tensor b = empty({100 * 1024}, kFloat32);
    Tensor c = empty({100 * 1024}, kFloat32);
    oldest = c.data_ptr();  // destroyed first (reverse order of declaration)
    newest = a.data_ptr();
  }
  const cpu::CpuMemoryStats stats = cpu::memory_stats();
  CHECK(stats.cached_bytes <= 1 * kMiB);
  CHECK(stats.cached_blocks == 2);
  CHECK(stats.evictions == evictions_before + 1);
  // The two kept blocks come back newest first; the evicted one (c's) is not among them.
  Tensor x = empty({100 * 1024}, kFloat32);
  Tensor y = empty({100 * 1024}, kFloat32);
  CHECK(x.data_ptr() == newest);
  CHECK(y.data_ptr() != oldest);
}

// Classes up to 1 MiB keep their free lists in an array indexed by class, larger ones in a
// map (core/cpu_allocator.cpp): each class must find its own blocks on either side of the
// boundary, and eviction must take the least recently freed block across both.
TEST_CASE("cpu allocator: every size class gets its own block back, on both sides of the indexed classes") {
  CacheLimit cache(64 * kMiB);
  // Twelve different classes: the first and last few indexed slots, both sides of 1 MiB.
  const std::vector<std::int64_t> sizes = {1,    65,    512,        513,  1024,        1025,
                                           8192, 65536, 15 * 65536, kMiB, kMiB + 1, 3 * kMiB};
  for (std::size_t i = 1; i < sizes.size(); ++i)
    REQUIRE(cpu::allocation_size(sizes[i]) > cpu::allocation_size(sizes[i - 1]));
  std::vector<Tensor> blocks;
  std::vector<void*> pointers;
  for (std::int64_t n : sizes) {
    blocks.push_back(empty({n}, kUInt8));
    pointers.push_back(blocks.back().data_ptr());
  }
  blocks.clear();  // every class now holds one cached block
  const cpu::CpuMemoryStats before = cpu::memory_stats();
  for (std::size_t i = sizes.size(); i-- > 0;) {  // the other order, so no class takes another's
    INFO("bytes " << sizes[i]);
    Tensor again = empty({sizes[i]}, kUInt8);
    CHECK(again.data_ptr() == pointers[i]);
  }
  CHECK(cpu::memory_stats().cache_hits == before.cache_hits + sizes.size());
}

TEST_CASE("cpu allocator: eviction takes the least recently freed block, indexed class or not") {
  for (bool large_first : {false, true}) {
    INFO("the large (map) class freed first: " << large_first);
    CacheLimit cache(3 * kMiB);
    {
      Tensor small_old = empty({static_cast<std::int64_t>(kMiB)}, kUInt8);  // an indexed class
      Tensor large = empty({static_cast<std::int64_t>(3 * kMiB / 2)}, kUInt8);  // past 1 MiB: the map
      Tensor small_new = empty({static_cast<std::int64_t>(kMiB)}, kUInt8);
      // Freed in this order: 3.5 MiB in all, so the first one freed must go.
      if (large_first) large = Tensor();
      small_old = Tensor();
      if (!large_first) large = Tensor();
      small_new = Tensor();
    }
    CHECK(cpu::memory_stats().cached_blocks == 2);
    // Whether a request of `bytes` was served from the cache (the block is kept alive, so
    // that freeing it does not change what the cache holds).
    std::vector<Tensor> taken;
    auto cached = [&taken](std::size_t bytes) {
      const std::uint64_t hits = cpu::memory_stats().cache_hits;
      taken.push_back(empty({static_cast<std::int64_t>(bytes)}, kUInt8));
      return cpu::memory_stats().cache_hits == hits + 1;
    };
    // Kept: both 1 MiB blocks when the large one was the oldest; else one of each.
    CHECK(cached(3 * kMiB / 2) == !large_first);
    CHECK(cached(kMiB));                 // the newest 1 MiB block, either way
    CHECK(cached(kMiB) == large_first);  // the older one
  }
}

TEST_CASE("cpu allocator: a block larger than the limit is never cached; empty_cache returns everything") {
  CacheLimit cache(1 * kMiB);
  { Tensor big = empty({1024 * 1024}, kFloat32); }  // 4 MiB
  CHECK(cpu::memory_stats().cached_bytes == 0);
  { Tensor small = empty({1024}, kFloat32); }
  CHECK(cpu::memory_stats().cached_blocks == 1);
  cpu::empty_cache();
  CHECK(cpu::memory_stats().cached_bytes == 0);
  CHECK(cpu::memory_stats().cached_blocks == 0);
}

TEST_CASE("cpu allocator: limit 0 turns caching off") {
  CacheLimit cache(0);
  { Tensor t = empty({256}, kFloat32); }
  CHECK(cpu::memory_stats().cached_bytes == 0);
  CHECK(cpu::cache_limit() == 0);
}

TEST_CASE("cpu allocator: peak statistics follow the live blocks") {
  CacheLimit cache(64 * kMiB);
  cpu::reset_peak_memory_stats();
  const std::size_t base = cpu::memory_stats().allocated_bytes;
  { Tensor t = empty({1 << 18}, kFloat32); }  // 1 MiB
  CHECK(cpu::memory_stats().max_allocated_bytes >= base + kMiB);
  cpu::reset_peak_memory_stats();
  CHECK(cpu::memory_stats().max_allocated_bytes == cpu::memory_stats().allocated_bytes);
}

TEST_CASE("cpu allocator: threads allocating and freeing at once leave consistent counts") {
  CacheLimit cache(8 * kMiB);
  const std::size_t live_before = cpu::memory_stats().allocated_bytes;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < 500; ++i) {
        // Sizes from 64 B to ~1 MiB, so both hits, misses and evictions happen.
        Tensor a = empty({16 << ((i + t) % 15)}, kFloat32);
        a.data_ptr<float>()[0] = static_cast<float>(i);
        Tensor b = empty({100 + i}, kFloat32);
        b.data_ptr<float>()[b.numel() - 1] = a.data_ptr<float>()[0];
      }
    });
  }
  for (auto& thread : threads) thread.join();
  const cpu::CpuMemoryStats stats = cpu::memory_stats();
  CHECK(stats.allocated_bytes == live_before);
  CHECK(stats.cached_bytes <= 8 * kMiB);
  CHECK(stats.cache_hits > 0);
}

#if EMBER_ADDRESS_SANITIZER
TEST_CASE("cpu allocator: under ASan a cached block, and the tail past the request, are poisoned") {
  CacheLimit cache(64 * kMiB);
  char* block = nullptr;
  {
    Tensor t = empty({1000}, kFloat32);  // 4000 bytes in a 4096-byte class
    block = static_cast<char*>(t.data_ptr());
    CHECK_FALSE(__asan_address_is_poisoned(block));
    CHECK_FALSE(__asan_address_is_poisoned(block + 3999));
    CHECK(__asan_address_is_poisoned(block + 4000));  // past the tensor: still a heap overflow to ASan
  }
  CHECK(__asan_address_is_poisoned(block));  // in the cache: use-after-free is reported
  Tensor again = empty({1000}, kFloat32);
  REQUIRE(static_cast<char*>(again.data_ptr()) == block);
  CHECK_FALSE(__asan_address_is_poisoned(block));
}
#endif
