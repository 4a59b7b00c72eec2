// core/allocator.h — where Storage gets its bytes.
//
// One Allocator per device type. The CPU allocator (core/cpu_allocator.h) hands out 64-byte
// aligned blocks (a cache line, and what AVX-512 loads like) and keeps freed ones for reuse.
// The CUDA backend registers its caching allocator here when it is linked in, so core never
// includes CUDA headers.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

#include <ember/core/device.h>

namespace ember {

class Allocator {
 public:
  virtual ~Allocator() = default;
  // Returns memory for `nbytes` bytes on `device` (nbytes may be 0: return nullptr or a
  // valid pointer, never throw for that). Throws ember::Error when out of memory.
  virtual void* allocate(std::size_t nbytes, Device device) = 0;
  virtual void deallocate(void* pointer, std::size_t nbytes, Device device) = 0;
};

constexpr std::size_t kCpuAlignment = 64;

// A standard-library allocator with the CPU allocator's alignment, for plain buffers that must
// start on a cache line as a tensor's data does: the peers' buffers in benchmarks/ (a GEMM
// whose C rows straddle cache lines stores each vector into two lines; both libraries get
// the same, aligned, buffers) and the GEMM tests (how the GEMM may split C between threads
// depends on it).
template <class T>
struct CpuAlignedAllocator {
  using value_type = T;
  CpuAlignedAllocator() = default;
  template <class U>
  CpuAlignedAllocator(const CpuAlignedAllocator<U>&) {}  // NOLINT: allocators convert implicitly
  T* allocate(std::size_t count) {
    return static_cast<T*>(::operator new(count * sizeof(T), std::align_val_t{kCpuAlignment}));
  }
  void deallocate(T* data, std::size_t) { ::operator delete(data, std::align_val_t{kCpuAlignment}); }
  bool operator==(const CpuAlignedAllocator&) const { return true; }
};
template <class T>
using CpuAlignedVector = std::vector<T, CpuAlignedAllocator<T>>;

// The CPU's caching allocator (core/cpu_allocator.cpp; statistics and empty_cache there).
Allocator& cpu_allocator();
// The allocator registered for a device type; throws DeviceError when none is (e.g. a CUDA
// tensor in a build without CUDA).
Allocator& allocator_for(DeviceType type);
void register_allocator(DeviceType type, Allocator* allocator);

}  // namespace ember
