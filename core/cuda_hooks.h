// core/cuda_hooks.h — ember::cuda::*, the device-management API (PyTorch: torch.cuda).
//
// Tutorial appendix (GPU): torch.cuda.is_available(), device_count(), synchronize(),
// memory_allocated() ... Core cannot include CUDA headers, so these functions forward to a
// CudaHooks object that the CUDA backend (cuda/cuda_hooks_impl.cpp) registers at start-up.
// In a CPU-only build nothing is registered: the queries answer false / 0 and the actions
// throw a DeviceError — never an abort — so a program can always ask "is there a GPU?".
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace ember::cuda {

struct DeviceProperties {
  std::string name;                 // e.g. "NVIDIA H200"
  std::size_t total_memory = 0;     // bytes
  int major = 0, minor = 0;         // compute capability (9.0 for Hopper)
  int multiprocessors = 0;          // SM count
};

// Which GEMM implementation CUDA matmuls use: ember's own kernels (the 128×128 fast kernel
// for large float32 products, the 64×64 reading kernel otherwise), ember's reading kernel
// always (EmberSimple: to compare the two), or cuBLAS.
enum class MatmulBackend { Ember, Cublas, EmberSimple };

// The interface the CUDA layer implements. Every method may assume a CUDA build; the
// free functions below handle the "no hooks registered" case.
class CudaHooks {
 public:
  virtual ~CudaHooks() = default;
  virtual int device_count() const = 0;   // 0 when the driver/GPU is missing
  virtual int current_device() const = 0;
  virtual void set_device(int device) = 0;
  virtual void synchronize() = 0;
  virtual DeviceProperties get_device_properties(int device) const = 0;
  virtual std::size_t memory_allocated(int device) const = 0;
  virtual std::size_t max_memory_allocated(int device) const = 0;
  virtual std::size_t memory_reserved(int device) const = 0;
  virtual void reset_peak_memory_stats(int device) = 0;
  virtual void empty_cache() = 0;
  virtual void set_matmul_backend(MatmulBackend backend) = 0;
  virtual MatmulBackend matmul_backend() const = 0;
  // Page-locked host memory (cudaHostAlloc / cudaFreeHost) and the query behind is_pinned().
  virtual void* allocate_pinned(std::size_t nbytes) = 0;
  virtual void free_pinned(void* pointer) = 0;
  virtual bool is_pinned(const void* pointer) const = 0;
  // Timing events for the op profiler (core/profiler.h): one recorded now on `device`'s
  // stream (nullptr when it cannot be made), the milliseconds between two of one device
  // (waiting for the later to complete), and their release. No synchronisation per op: the
  // profiler reads the times once, when it stops.
  virtual void* record_timing_event(int device) = 0;
  virtual double elapsed_milliseconds(void* start, void* end) = 0;
  virtual void destroy_timing_event(void* event) = 0;
};

// Called once by the CUDA layer's static registrar.
void register_cuda_hooks(CudaHooks* hooks);
// True when a CUDA backend is linked in (regardless of whether a GPU is present).
bool is_built();

bool is_available();   // built with CUDA and at least one GPU visible
int device_count();    // 0 without CUDA or without a GPU
int current_device();  // DeviceError when no GPU
void set_device(int device);  // DeviceError on a bad index
void synchronize();           // waits for all work on the current device
DeviceProperties get_device_properties(int device);

// Caching-allocator statistics in bytes (device -1 = current device). 0 without a GPU.
std::size_t memory_allocated(int device = -1);
std::size_t max_memory_allocated(int device = -1);
std::size_t memory_reserved(int device = -1);
void reset_peak_memory_stats(int device = -1);
void empty_cache();  // returns cached, unused blocks to the driver; no-op without a GPU

// Pinned host memory for Tensor::pin_memory() (core/pinned_memory.cpp). allocate throws
// DeviceError without a GPU ("Cannot access accelerator device when none is available.");
// is_pinned_memory answers false then.
void* allocate_pinned_memory(std::size_t nbytes);
void free_pinned_memory(void* pointer);
bool is_pinned_memory(const void* pointer);

// The op profiler's GPU timing (CudaHooks above); without a GPU: nullptr, nullopt, nothing.
void* record_timing_event(int device);
std::optional<double> elapsed_milliseconds(void* start, void* end);
void destroy_timing_event(void* event);

void set_matmul_backend(MatmulBackend backend);  // DeviceError in a CPU-only build
MatmulBackend matmul_backend();                  // Ember in a CPU-only build

}  // namespace ember::cuda
