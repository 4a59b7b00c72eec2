// cuda/cuda_check.h — turn every failed CUDA runtime call into an ember exception.
//
// EMBER_CUDA_CHECK(cudaMalloc(&p, n)) throws ember::cuda::CudaError whose message names
// the call, the file and the line, plus CUDA's own error string — the first thing a
// learner needs when a kernel misbehaves. Kernel launches are checked the same way by
// EMBER_LAUNCH (cuda/kernels/device_support.cuh).
#pragma once

#include <cuda_runtime_api.h>

#include <ember/core/error.h>

namespace ember::cuda {

class CudaError : public DeviceError {
  using DeviceError::DeviceError;
};

// Throws CudaError("CUDA error: <text> (<call> at <file>:<line>)") unless status is success.
void check_cuda(cudaError_t status, const char* call, const char* file, int line);
// The launch check behind EMBER_LAUNCH: throws CudaError("CUDA error: <text> (kernel launch
// <kernel> in <function>() at <file>:<line>)") unless status is success. `function` is the
// launching function (__func__), which names the kernel family when the kernel expression is
// a local pointer such as `kernel`.
void check_launch(cudaError_t status, const char* kernel, const char* function, const char* file, int line);

// The CUDA runtime's per-thread last-error slot: take() reads and clears it (cudaGetLastError).
struct RuntimeLastError {
  static cudaError_t take() { return cudaGetLastError(); }
};

// Runs `launch` (one kernel launch, EMBER_LAUNCH) and reports only that launch's own error.
// A kernel launch returns nothing: its error is found in the last-error slot, which also
// holds whatever an earlier call left there unread — cudaEventQuery's cudaErrorNotReady
// (not even a failure), or a failed call that was checked by its return value alone. Such
// a stale error is cleared before the launch, so it is neither blamed on this kernel nor
// left to trip a later one. A sticky error (a kernel that faulted) survives the clearing:
// the launch then fails with it, which is the truth. LastError is a test's seam.
template <class LastError = RuntimeLastError, class Launch>
void launch_checked(Launch&& launch, const char* kernel, const char* function, const char* file, int line) {
  (void)LastError::take();
  launch();
  check_launch(LastError::take(), kernel, function, file, line);
}

}  // namespace ember::cuda

#define EMBER_CUDA_CHECK(call) ::ember::cuda::check_cuda((call), #call, __FILE__, __LINE__)
