// cuda/device_scratch.h — temporary device memory for kernels that need a scratch buffer
// (split reductions, im2col columns, foreach_norm's partials): the ScratchAllocator of
// cuda/kernels/reduce.cuh served by the caching allocator on the current device. Under the
// emulator the tests hand the kernels host memory instead.
#pragma once

#include <cstddef>

#include <ember/core/allocator.h>
#include <ember/cuda/kernels/reduce.cuh>

namespace ember::cuda {

class DeviceScratch final : public kernels::ScratchAllocator {
 public:
  void* allocate(std::size_t bytes) override { return allocator_for(DeviceType::CUDA).allocate(bytes, kCUDA); }
  // Safe right after the launches that use it: the caching allocator hands the block out
  // again only to work queued later on the same stream.
  void release(void* pointer, std::size_t bytes) override {
    allocator_for(DeviceType::CUDA).deallocate(pointer, bytes, kCUDA);
  }
};

}  // namespace ember::cuda
