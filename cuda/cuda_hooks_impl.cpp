// cuda/cuda_hooks_impl.cpp — the CudaHooks core forwards ember::cuda::* to (core/cuda_hooks.h).
//
// Also home of the small shared pieces of cuda/cuda_context.h: device counting (an absent
// driver or GPU is "0 devices", never an error: toolchain.md), the device guard, the
// matmul-backend switch, check_cuda and check_launch.
#include <atomic>

#include <ember/cuda/caching_allocator.h>
#include <ember/cuda/cuda_check.h>
#include <ember/cuda/cuda_context.h>

namespace ember::cuda {

void check_cuda(cudaError_t status, const char* call, const char* file, int line) {
  if (status == cudaSuccess) return;
  (void)cudaGetLastError();  // clear a non-sticky error so the next call starts clean
  throw CudaError(make_message("CUDA error: ", cudaGetErrorString(status), " (", call, " at ", file, ":", line, ")"));
}

void check_launch(cudaError_t status, const char* kernel, const char* function, const char* file, int line) {
  if (status == cudaSuccess) return;
  (void)cudaGetLastError();
  throw CudaError(make_message("CUDA error: ", cudaGetErrorString(status), " (kernel launch ", kernel, " in ", function,
                               "() at ", file, ":", line, ")"));
}

int visible_device_count() {
  static const int count = [] {
    int devices = 0;  // cudaGetDeviceCount leaves it unwritten on failure
    if (cudaGetDeviceCount(&devices) != cudaSuccess) {
      (void)cudaGetLastError();
      return 0;
    }
    return devices;
  }();
  return count;
}

int resolve_device_index(Device device) {
  EMBER_CHECK(device.is_cuda(), DeviceError, "expected a CUDA device, got ", device);
  EMBER_CHECK(visible_device_count() > 0, DeviceError,
              "Found no NVIDIA driver on your system or no CUDA GPU is visible (ember's CUDA backend needs one)");
  if (device.has_index()) {
    EMBER_CHECK(device.index() < visible_device_count(), DeviceError,
                "CUDA error: invalid device ordinal (", device, " requested, ", visible_device_count(), " visible)");
    return device.index();
  }
  int current = 0;
  EMBER_CUDA_CHECK(cudaGetDevice(&current));
  return current;
}

DeviceGuard::DeviceGuard(int device) {
  if (device < 0) return;  // "the current device": nothing to switch
  EMBER_CUDA_CHECK(cudaGetDevice(&previous_));
  if (previous_ != device) {
    EMBER_CUDA_CHECK(cudaSetDevice(device));
    changed_ = true;
  }
}
DeviceGuard::~DeviceGuard() {
  if (changed_) (void)cudaSetDevice(previous_);
}

namespace {
std::atomic<MatmulBackend>& matmul_setting() {
  static std::atomic<MatmulBackend> setting{MatmulBackend::Ember};
  return setting;
}
}  // namespace

MatmulBackend selected_matmul_backend() { return matmul_setting().load(); }
void select_matmul_backend(MatmulBackend backend) { matmul_setting().store(backend); }

namespace {

class CudaHooksImpl final : public CudaHooks {
 public:
  int device_count() const override { return visible_device_count(); }
  int current_device() const override {
    int device = 0;
    EMBER_CUDA_CHECK(cudaGetDevice(&device));
    return device;
  }
  void set_device(int device) override { EMBER_CUDA_CHECK(cudaSetDevice(device)); }
  void synchronize() override { EMBER_CUDA_CHECK(cudaDeviceSynchronize()); }
  DeviceProperties get_device_properties(int device) const override {
    cudaDeviceProp raw{};
    EMBER_CUDA_CHECK(cudaGetDeviceProperties(&raw, device));
    DeviceProperties properties;
    properties.name = raw.name;
    properties.total_memory = raw.totalGlobalMem;
    properties.major = raw.major;
    properties.minor = raw.minor;
    properties.multiprocessors = raw.multiProcessorCount;
    return properties;
  }
  std::size_t memory_allocated(int device) const override { return caching_allocator(device).stats().allocated; }
  std::size_t max_memory_allocated(int device) const override {
    return caching_allocator(device).stats().max_allocated;
  }
  std::size_t memory_reserved(int device) const override { return caching_allocator(device).stats().reserved; }
  void reset_peak_memory_stats(int device) override { caching_allocator(device).reset_peak(); }
  void empty_cache() override { empty_all_caches(); }
  void set_matmul_backend(MatmulBackend backend) override { select_matmul_backend(backend); }
  MatmulBackend matmul_backend() const override { return selected_matmul_backend(); }
  void* allocate_pinned(std::size_t nbytes) override { return cuda::allocate_pinned(nbytes); }
  void free_pinned(void* pointer) override { cuda::free_pinned(pointer); }
  bool is_pinned(const void* pointer) const override {
    cudaPointerAttributes attributes{};
    if (cudaPointerGetAttributes(&attributes, pointer) != cudaSuccess) {
      (void)cudaGetLastError();  // not a pointer CUDA knows: pageable memory
      return false;
    }
    return attributes.type == cudaMemoryTypeHost;
  }
  void* record_timing_event(int device) override {
    DeviceGuard guard(device);
    cudaEvent_t event = nullptr;
    if (cudaEventCreate(&event) != cudaSuccess) {
      (void)cudaGetLastError();  // no event, no GPU time for this op; the launch check stays clean
      return nullptr;
    }
    if (cudaEventRecord(event, current_stream()) != cudaSuccess) {
      (void)cudaGetLastError();
      (void)cudaEventDestroy(event);
      return nullptr;
    }
    return event;
  }
  double elapsed_milliseconds(void* start, void* end) override {
    EMBER_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(end)));
    float milliseconds = 0;
    EMBER_CUDA_CHECK(cudaEventElapsedTime(&milliseconds, static_cast<cudaEvent_t>(start), static_cast<cudaEvent_t>(end)));
    return milliseconds;
  }
  void destroy_timing_event(void* event) override { (void)cudaEventDestroy(static_cast<cudaEvent_t>(event)); }
};

struct RegisterHooks {
  RegisterHooks() {
    static CudaHooksImpl hooks;
    register_cuda_hooks(&hooks);
  }
} register_hooks_at_startup;

}  // namespace

}  // namespace ember::cuda
