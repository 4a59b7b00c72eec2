// cuda/cuda_allocator.cpp — the CUDA caching allocator wired to cudaMalloc, registered as
// core's Allocator for DeviceType::CUDA, plus pinned host memory.
//
// The bookkeeping (size classes, best-fit reuse, splitting, merging) is in
// cuda/caching_allocator.h and unit-tested on the CPU; this file only supplies the real
// memory and one allocator per device. Tutorial appendix: torch.cuda.memory_allocated().
#include <array>
#include <memory>
#include <mutex>

#include <ember/core/allocator.h>
#include <ember/cuda/caching_allocator.h>
#include <ember/cuda/cuda_check.h>
#include <ember/cuda/cuda_context.h>

namespace ember::cuda {

namespace {

constexpr int kMaxDevices = 64;

// Segments straight from the driver, on one device.
class CudaMemorySource final : public DeviceMemorySource {
 public:
  explicit CudaMemorySource(int device) : device_(device) {}
  void* allocate(std::size_t bytes) override {
    DeviceGuard guard(device_);
    void* pointer = nullptr;
    cudaError_t status = cudaMalloc(&pointer, bytes);
    if (status == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();  // clear the sticky-free error so later calls are unaffected
      return nullptr;            // the caching allocator frees its cache and retries
    }
    check_cuda(status, "cudaMalloc", __FILE__, __LINE__);
    return pointer;
  }
  void release(void* pointer, std::size_t) override {
    DeviceGuard guard(device_);
    // cudaFree synchronises the device: blocks freed by ember may still be read by queued kernels.
    cudaError_t status = cudaFree(pointer);
    (void)status;  // at process exit the driver may already be shutting down; nothing to report to
  }

 private:
  int device_;
};

struct DeviceAllocator {
  std::unique_ptr<CudaMemorySource> source;
  std::unique_ptr<CachingAllocatorCore> core;
};

std::array<DeviceAllocator, kMaxDevices>& device_allocators() {
  static std::array<DeviceAllocator, kMaxDevices> table;
  return table;
}
std::mutex& table_mutex() {
  static std::mutex mutex;
  return mutex;
}

class CudaAllocator final : public Allocator {
 public:
  void* allocate(std::size_t nbytes, Device device) override {
    if (nbytes == 0) return nullptr;
    const int index = resolve_device_index(device);
    return caching_allocator(index).allocate(nbytes, current_stream());
  }
  void deallocate(void* pointer, std::size_t, Device device) override {
    if (pointer == nullptr) return;
    caching_allocator(resolve_device_index(device)).deallocate(pointer);
  }
};

// Registered at start-up: ember_cuda is linked whole-archive so this constructor runs.
struct RegisterAllocator {
  RegisterAllocator() {
    static CudaAllocator allocator;
    register_allocator(DeviceType::CUDA, &allocator);
  }
} register_allocator_at_startup;

}  // namespace

CachingAllocatorCore& caching_allocator(int device) {
  EMBER_CHECK(device >= 0 && device < kMaxDevices && device < visible_device_count(), DeviceError,
              "CUDA error: invalid device ordinal (device ", device, ", ", visible_device_count(), " visible)");
  std::lock_guard<std::mutex> lock(table_mutex());
  DeviceAllocator& slot = device_allocators()[device];
  if (!slot.core) {
    slot.source = std::make_unique<CudaMemorySource>(device);
    slot.core = std::make_unique<CachingAllocatorCore>(*slot.source);
  }
  return *slot.core;
}

void empty_all_caches() {
  std::lock_guard<std::mutex> lock(table_mutex());
  for (DeviceAllocator& slot : device_allocators())
    if (slot.core) slot.core->empty_cache();
}

void* allocate_pinned(std::size_t nbytes) {
  if (nbytes == 0) return nullptr;
  void* pointer = nullptr;
  EMBER_CUDA_CHECK(cudaHostAlloc(&pointer, nbytes, cudaHostAllocPortable));
  return pointer;
}
void free_pinned(void* pointer) {
  if (pointer == nullptr) return;
  // An asynchronous host->device copy may still be reading this buffer: wait for the queued
  // work first. (PyTorch's caching host allocator records an event per block instead and
  // reuses blocks; ember keeps the simple, always-correct rule.) Called from a deleter, so
  // errors are dropped: at process exit the driver may already be gone.
  (void)cudaDeviceSynchronize();
  (void)cudaFreeHost(pointer);
  (void)cudaGetLastError();
}

}  // namespace ember::cuda
