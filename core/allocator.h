// core/allocator.h — where Storage gets its bytes.
//
// One Allocator per device type. The CPU allocator (core/cpu_allocator.h) hands out 64-byte
// aligned blocks (a cache line, and what AVX-512 loads like) and keeps freed ones for reuse.
// The CUDA backend registers its caching allocator here when it is linked in, so core never
// includes CUDA headers.
#pragma once

#include <cstddef>

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

// The CPU's caching allocator (core/cpu_allocator.cpp; statistics and empty_cache there).
Allocator& cpu_allocator();
// The allocator registered for a device type; throws DeviceError when none is (e.g. a CUDA
// tensor in a build without CUDA).
Allocator& allocator_for(DeviceType type);
void register_allocator(DeviceType type, Allocator* allocator);

}  // namespace ember
