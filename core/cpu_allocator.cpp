// core/cpu_allocator.cpp — the CPU caching allocator (what and why: core/cpu_allocator.h).
//
// Layout: one object, created on first use and never destroyed (tensors freed while the
// program exits still find it; under LeakSanitizer the cached blocks stay reachable from it,
// so they are not reported). One mutex guards the free lists and the counters; the system
// calls (posix_memalign, free, madvise) run outside it. The free lists of classes up to
// 1 MiB sit in an array indexed by class, larger ones in a map.
#include <ember/core/cpu_allocator.h>

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <cstdlib>
#include <deque>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <ember/core/allocator.h>
#include <ember/core/error.h>

#include <ember/core/address_sanitizer.h>
#if EMBER_ADDRESS_SANITIZER
#include <sanitizer/asan_interface.h>
#endif

namespace ember::cpu {

namespace {

constexpr std::size_t kKiB = 1024, kMiB = 1024 * kKiB, kGiB = 1024 * kMiB;
constexpr std::size_t kHugePage = 2 * kMiB;
// From this size on a block is huge-page aligned and advised (a smaller one would round a
// whole 2 MiB page up for little gain).
constexpr std::size_t kHugePageThreshold = 4 * kMiB;

void poison(void* pointer, std::size_t nbytes) {
#if EMBER_ADDRESS_SANITIZER
  ASAN_POISON_MEMORY_REGION(pointer, nbytes);
#else
  (void)pointer, (void)nbytes;
#endif
}

void unpoison(void* pointer, std::size_t nbytes) {
#if EMBER_ADDRESS_SANITIZER
  ASAN_UNPOISON_MEMORY_REGION(pointer, nbytes);
#else
  (void)pointer, (void)nbytes;
#endif
}

// Hands a block of `size` bytes (a size class) to the caller who asked for `nbytes`: the
// tail past nbytes is no one's, so ASan keeps reporting it.
void* hand_out(void* pointer, std::size_t nbytes, std::size_t size) {
  unpoison(pointer, nbytes);
  poison(static_cast<char*>(pointer) + nbytes, size - nbytes);
  return pointer;
}

bool huge_pages_enabled();

// ASan's allocator aborts the process (rather than failing) for requests above its limit
// (1 TiB on x86-64, with the default allocator_may_return_null=0): in a sanitized build such
// a request fails here instead, as it would anyway, so the caller still gets the error.
#if EMBER_ADDRESS_SANITIZER
constexpr std::size_t kAsanMaxAllocation = std::size_t{1} << 40;
#endif

void* system_allocate(std::size_t size) {
#if EMBER_ADDRESS_SANITIZER
  if (size > kAsanMaxAllocation) return nullptr;
#endif
  const bool huge = size >= kHugePageThreshold && huge_pages_enabled();
  const std::size_t alignment = huge ? kHugePage : kCpuAlignment;
  void* pointer = nullptr;
  // posix_memalign, not aligned_alloc: a size class need not be a multiple of 2 MiB.
  if (posix_memalign(&pointer, alignment, size) != 0) return nullptr;
#ifdef MADV_HUGEPAGE
  // Advice only: with transparent huge pages in "madvise" mode (this machine's setting) the
  // first touch then maps 2 MiB at a time; where THP is off or "always" it changes nothing.
  if (huge) madvise(pointer, size / kHugePage * kHugePage, MADV_HUGEPAGE);
#endif
  return pointer;
}

void system_free(void* pointer, std::size_t size) {
  unpoison(pointer, size);  // ASan's free expects the block as it handed it out
  std::free(pointer);
}

// "512M", "2G", "1048576": bytes, with an optional binary K/M/G suffix. nullopt-like -1 on junk.
long long parse_bytes(const char* text) {
  std::string value(text);
  while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back()))) value.pop_back();
  if (value.empty()) return -1;
  std::size_t multiplier = 1;
  switch (std::toupper(static_cast<unsigned char>(value.back()))) {
    case 'K': multiplier = kKiB; break;
    case 'M': multiplier = kMiB; break;
    case 'G': multiplier = kGiB; break;
    default: break;
  }
  if (multiplier != 1) value.pop_back();
  if (value.empty() || !std::all_of(value.begin(), value.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
    return -1;
  return std::stoll(value) * static_cast<long long>(multiplier);
}

// EMBER_CPU_HUGEPAGES=0 turns the huge-page advice off (to measure what it buys).
bool huge_pages_enabled() {
  static const bool enabled = [] {
    const char* text = std::getenv("EMBER_CPU_HUGEPAGES");
    return text == nullptr || std::string(text) != "0";
  }();
  return enabled;
}

std::size_t default_cache_limit() {
  if (const char* text = std::getenv("EMBER_CPU_CACHE_LIMIT")) {
    const long long bytes = parse_bytes(text);
    EMBER_CHECK(bytes >= 0, ValueError, "EMBER_CPU_CACHE_LIMIT must be a byte count such as 1073741824, 512M or 2G, got '",
                text, "'");
    return static_cast<std::size_t>(bytes);
  }
#if EMBER_ADDRESS_SANITIZER
  return 0;  // let ASan's allocator see every block (see the header)
#else
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
  const std::size_t physical = pages > 0 && page_size > 0 ? static_cast<std::size_t>(pages) * page_size : 8 * kGiB;
  return std::min(physical / 8, 4 * kGiB);
#endif
}

// Size classes up to 1 MiB (a training step's activations and gradients, at most 96
// classes: 8 of 64-byte steps to 512 bytes, then 8 per power of two) have their free list at
// a fixed index of an array, found with a few shifts; larger ones are kept in a std::map.
// The map alone cost a tree walk per allocation and per free, 1 % of the toy MLP's step.
constexpr std::size_t kIndexedClassLimit = kMiB;
constexpr std::size_t kIndexedClasses = 8 + 8 * 11;  // up to 512 bytes, then (512 B, 1 MiB]

// The array index of a size class (allocation_size's result) of at most kIndexedClassLimit.
constexpr std::size_t class_index(std::size_t size) {
  if (size <= 512) return size / kCpuAlignment - 1;
  const int top = std::bit_width(size - 1) - 1;  // 2^top < size <= 2^(top + 1), top >= 9
  const std::size_t step = std::size_t{1} << (top - 3);
  return 8 + static_cast<std::size_t>(top - 9) * 8 + (size / step - 9);
}

// The size class at an array index (the inverse of class_index).
constexpr std::size_t class_size(std::size_t index) {
  if (index < 8) return (index + 1) * kCpuAlignment;
  const std::size_t top = 9 + (index - 8) / 8, eighths = 9 + (index - 8) % 8;
  return eighths << (top - 3);
}

constexpr bool class_indices_round_trip() {
  for (std::size_t index = 0; index < kIndexedClasses; ++index)
    if (class_index(class_size(index)) != index) return false;
  return class_size(kIndexedClasses - 1) == kIndexedClassLimit;
}
static_assert(class_indices_round_trip(), "class_size must invert class_index over the indexed classes");

class CachingCpuAllocator final : public Allocator {
 public:
  CachingCpuAllocator() : limit_(default_cache_limit()) {}

  void* allocate(std::size_t nbytes, Device) override {
    if (nbytes == 0) return nullptr;
    const std::size_t size = allocation_size(nbytes);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (std::deque<CachedBlock>* blocks = free_list(size, false); blocks != nullptr && !blocks->empty()) {
        void* pointer = blocks->back().pointer;
        blocks->pop_back();
        cached_bytes_ -= size;
        --cached_blocks_;
        ++hits_;
        count_allocated(size);
        return hand_out(pointer, nbytes, size);
      }
      ++misses_;
    }
    void* pointer = system_allocate(size);
    if (pointer == nullptr) {
      empty_cache();  // the cached blocks may be what the system is missing
      pointer = system_allocate(size);
    }
    EMBER_CHECK(pointer != nullptr, Error, "DefaultCPUAllocator: can't allocate memory: you tried to allocate ", nbytes,
                " bytes.");
    {
      std::lock_guard<std::mutex> lock(mutex_);
      count_allocated(size);
    }
    return hand_out(pointer, nbytes, size);
  }

  void deallocate(void* pointer, std::size_t nbytes, Device) override {
    if (pointer == nullptr) return;
    const std::size_t size = allocation_size(nbytes);
    std::vector<CachedBlock> evicted;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      allocated_bytes_ -= size;
      if (size <= limit_) {
        poison(pointer, size);
        free_list(size, true)->push_back({pointer, clock_++});
        cached_bytes_ += size;
        ++cached_blocks_;
        while (cached_bytes_ > limit_) evicted.push_back(pop_oldest());
        evictions_ += evicted.size();
        pointer = nullptr;  // kept
      }
    }
    if (pointer != nullptr) system_free(pointer, size);
    for (const CachedBlock& block : evicted) system_free(block.pointer, block.size);
  }

  void empty_cache() {
    std::vector<CachedBlock> released;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (std::size_t index = 0; index < kIndexedClasses; ++index) {
        for (const CachedBlock& block : indexed_blocks_[index])
          released.push_back({block.pointer, block.freed_at, class_size(index)});
        indexed_blocks_[index].clear();
      }
      for (auto& [size, blocks] : free_blocks_)
        for (const CachedBlock& block : blocks) released.push_back({block.pointer, block.freed_at, size});
      free_blocks_.clear();
      cached_bytes_ = 0;
      cached_blocks_ = 0;
    }
    for (const CachedBlock& block : released) system_free(block.pointer, block.size);
  }

  void set_limit(std::size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      limit_ = bytes;
    }
    empty_cache();  // simplest way to honour a smaller limit; a larger one starts empty too
  }

  std::size_t limit() {
    std::lock_guard<std::mutex> lock(mutex_);
    return limit_;
  }

  CpuMemoryStats stats() {
    std::lock_guard<std::mutex> lock(mutex_);
    return {allocated_bytes_, max_allocated_bytes_, cached_bytes_, cached_blocks_, hits_, misses_, evictions_};
  }

  void reset_peak() {
    std::lock_guard<std::mutex> lock(mutex_);
    max_allocated_bytes_ = allocated_bytes_;
  }

 private:
  struct CachedBlock {
    void* pointer;
    std::uint64_t freed_at;  // clock_ when it was freed: the smallest is evicted first
    std::size_t size = 0;    // filled in only outside the free lists
  };

  void count_allocated(std::size_t size) {
    allocated_bytes_ += size;
    max_allocated_bytes_ = std::max(max_allocated_bytes_, allocated_bytes_);
  }

  // The free list of a size class (nullptr when a large class has none and `create` is false).
  std::deque<CachedBlock>* free_list(std::size_t size, bool create) {
    if (size <= kIndexedClassLimit) return &indexed_blocks_[class_index(size)];
    if (create) return &free_blocks_[size];
    auto found = free_blocks_.find(size);
    return found == free_blocks_.end() ? nullptr : &found->second;
  }

  // Removes the least recently freed block of all classes (each list is in freeing order,
  // so it is the front of one of them). Called with the mutex held and the cache non-empty.
  CachedBlock pop_oldest() {
    std::deque<CachedBlock>* oldest = nullptr;
    std::size_t oldest_size = 0;
    auto consider = [&](std::deque<CachedBlock>& blocks, std::size_t size) {
      if (!blocks.empty() && (oldest == nullptr || blocks.front().freed_at < oldest->front().freed_at)) {
        oldest = &blocks;
        oldest_size = size;
      }
    };
    for (std::size_t index = 0; index < kIndexedClasses; ++index) consider(indexed_blocks_[index], class_size(index));
    for (auto& [size, blocks] : free_blocks_) consider(blocks, size);
    CachedBlock block = oldest->front();
    block.size = oldest_size;
    oldest->pop_front();
    cached_bytes_ -= block.size;
    --cached_blocks_;
    return block;
  }

  std::mutex mutex_;
  std::array<std::deque<CachedBlock>, kIndexedClasses> indexed_blocks_;  // classes up to 1 MiB, oldest first
  std::map<std::size_t, std::deque<CachedBlock>> free_blocks_;  // larger classes -> blocks, oldest first
  std::size_t limit_;
  std::uint64_t clock_ = 0;
  std::size_t allocated_bytes_ = 0, max_allocated_bytes_ = 0, cached_bytes_ = 0, cached_blocks_ = 0;
  std::uint64_t hits_ = 0, misses_ = 0, evictions_ = 0;
};

CachingCpuAllocator& instance() {
  static CachingCpuAllocator* allocator = new CachingCpuAllocator();  // never destroyed: see the top
  return *allocator;
}

}  // namespace

std::size_t allocation_size(std::size_t nbytes) {
  auto round_up = [](std::size_t value, std::size_t step) { return (value + step - 1) / step * step; };
  if (nbytes <= 512) return round_up(std::max<std::size_t>(nbytes, 1), kCpuAlignment);
  if (nbytes > std::numeric_limits<std::size_t>::max() / 4) return nbytes;  // fails in the system allocator anyway
  // 2^top < nbytes <= 2^(top + 1): eight classes in that range, each 2^(top - 3) wide.
  const int top = std::bit_width(nbytes - 1) - 1;
  return round_up(nbytes, std::size_t{1} << (top - 3));
}

void empty_cache() { instance().empty_cache(); }
void set_cache_limit(std::size_t bytes) { instance().set_limit(bytes); }
std::size_t cache_limit() { return instance().limit(); }
CpuMemoryStats memory_stats() { return instance().stats(); }
void reset_peak_memory_stats() { instance().reset_peak(); }

}  // namespace ember::cpu

namespace ember {

Allocator& cpu_allocator() { return cpu::instance(); }

}  // namespace ember
