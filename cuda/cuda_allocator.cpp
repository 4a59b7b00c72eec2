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
#include <ember/cuda/caching_host_allocator.h>
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
  // Never throws: it runs from the caching allocator's destructor, at process exit too,
  // when the runtime may be unloading — where DeviceGuard's checked cudaGetDevice would
  // throw through a destructor (std::terminate). So the device is switched by hand and
  // every error dropped (and cleared from the thread's last-error slot).
  void release(void* pointer, std::size_t) override {
    int previous = -1;
    const bool switched =
        cudaGetDevice(&previous) == cudaSuccess && previous != device_ && cudaSetDevice(device_) == cudaSuccess;
    // cudaFree synchronises the device: blocks freed by ember may still be read by queued kernels.
    (void)cudaFree(pointer);
    if (switched) (void)cudaSetDevice(previous);
    (void)cudaGetLastError();
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

namespace {

// Pinned memory from cudaHostAlloc (portable: usable from every device) and the events
// that tell when a queued copy has read it (caching_host_allocator.h).
class PinnedMemorySource final : public HostMemorySource {
 public:
  void* allocate(std::size_t bytes) override {
    void* pointer = nullptr;
    EMBER_CUDA_CHECK(cudaHostAlloc(&pointer, bytes, cudaHostAllocPortable));
    return pointer;
  }
  // Called from deleters and at process exit (the driver may be gone): errors are dropped.
  void release(void* pointer) noexcept override {
    (void)cudaFreeHost(pointer);
    (void)cudaGetLastError();
  }
  // On the current device, which the copy's DeviceGuard made the stream's.
  void* record_event(void* stream) override {
    cudaEvent_t event = nullptr;
    EMBER_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    const cudaError_t status = cudaEventRecord(event, static_cast<cudaStream_t>(stream));
    if (status != cudaSuccess) (void)cudaEventDestroy(event);
    EMBER_CUDA_CHECK(status);
    return event;
  }
  bool event_done(void* event) override {
    const cudaError_t status = cudaEventQuery(static_cast<cudaEvent_t>(event));
    if (status == cudaErrorNotReady) {
      (void)cudaGetLastError();  // not a failure: keep it out of the next launch's check
      return false;
    }
    EMBER_CUDA_CHECK(status);
    return true;
  }
  void destroy_event(void* event) noexcept override {
    (void)cudaEventDestroy(static_cast<cudaEvent_t>(event));
    (void)cudaGetLastError();
  }
};

CachingHostAllocatorCore& host_allocator() {
  // Never destroyed: pinned tensors held by other static objects may be freed after this
  // point of exit, and the driver frees the process's pinned memory itself.
  static PinnedMemorySource* source = new PinnedMemorySource;
  static CachingHostAllocatorCore* core = new CachingHostAllocatorCore(*source);
  return *core;
}

}  // namespace

void* allocate_pinned(std::size_t nbytes) { return host_allocator().allocate(nbytes); }

void free_pinned(void* pointer) {
  if (pointer == nullptr) return;
  // No device synchronisation: the block waits in the cache until the events of the copies
  // that read it have completed (record_pinned_use). Called from a deleter: never throws.
  try {
    host_allocator().deallocate(pointer);
  } catch (const std::exception&) {
    (void)cudaGetLastError();
  }
}

bool record_pinned_use(const void* pointer, cudaStream_t stream) {
  return host_allocator().record_use(pointer, stream);
}

void empty_pinned_cache() { host_allocator().empty_cache(); }

}  // namespace ember::cuda
