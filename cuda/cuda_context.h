// cuda/cuda_context.h — process-wide CUDA state shared by the backend's host files.
//
// ember runs every kernel of a device on that device's default (legacy) stream, so work is
// ordered exactly as the program issued it and a device→host copy waits for it — the same
// model as PyTorch's default stream. The caching allocator keys blocks by this stream.
#pragma once

#include <cstddef>

#include <cuda_runtime_api.h>

#include <ember/core/cuda_hooks.h>
#include <ember/core/device.h>

namespace ember::cuda {

class CachingAllocatorCore;

// Number of visible GPUs; 0 when there is no driver or device (any CUDA error counts as 0).
int visible_device_count();
// Index for a Device: its own, or the current device for "cuda" without an index.
int resolve_device_index(Device device);
// The stream ember's kernels use: the legacy default stream of the current device (one per
// device), so a DeviceGuard also selects the stream.
inline cudaStream_t current_stream() { return cudaStreamLegacy; }

// The GEMM implementation chosen with set_matmul_backend (ember's kernel by default).
MatmulBackend selected_matmul_backend();
void select_matmul_backend(MatmulBackend backend);

// Per-device caching allocators (cuda_allocator.cpp).
CachingAllocatorCore& caching_allocator(int device);
void empty_all_caches();

// Pinned (page-locked) host memory: host↔device copies from it run at full PCIe/NVLink
// speed and can be asynchronous (tutorial appendix: DataLoader(pin_memory=True)).
// Blocks are cached (cuda/caching_host_allocator.h): a freed block is reused once the
// copies recorded against it with record_pinned_use have completed on their streams.
void* allocate_pinned(std::size_t nbytes);
void free_pinned(void* pointer);
// A copy queued on `stream` reads or writes `pointer` (inside a pinned block): its block is
// not reused before the copy completes. False when `pointer` is not cached pinned memory.
bool record_pinned_use(const void* pointer, cudaStream_t stream);
void empty_pinned_cache();  // returns the free pinned blocks to the driver

// Sets a device for the lifetime of the guard and restores the previous one afterwards
// (PyTorch's c10::cuda::CUDAGuard). A negative index ("cuda" without one, or a plan built
// for the current device) leaves the current device alone. Every CUDA kernel entry point holds
// one for its plan's device, so an op on cuda:1 tensors runs on cuda:1 whatever is current.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
  bool changed_ = false;
};

}  // namespace ember::cuda
