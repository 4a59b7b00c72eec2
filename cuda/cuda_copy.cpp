// cuda/cuda_copy.cpp — raw byte copies to, from and between GPUs (the copy_bytes kernel
// families of core/backend.h); core/copy.cpp builds tensor copies on top of them.
//
// Host<->device: cudaMemcpy (with unified addressing cudaMemcpyDefault infers the direction
// from the pointers); a copy to the host returns when the data has arrived (cudaMemcpy waits
// for the kernels queued before it on the legacy stream). GPU<->GPU: cudaMemcpyPeer, which is
// ordered after the work already queued on both devices and before later work on either — no
// host staging, direct over NVLink/PCIe when peer access is possible.
#include <ember/core/backend.h>
#include <ember/core/dispatch.h>
#include <ember/cuda/cuda_check.h>
#include <ember/cuda/cuda_context.h>

namespace ember::cuda {

namespace {

// True (and done) when both sides are GPUs; a copy within one GPU is a plain cudaMemcpy.
bool copy_between_gpus(void* dst, Device dst_device, const void* src, Device src_device, std::size_t nbytes) {
  if (!dst_device.is_cuda() || !src_device.is_cuda()) return false;
  const int to = resolve_device_index(dst_device), from = resolve_device_index(src_device);
  DeviceGuard guard(to);
  if (to == from) {
    EMBER_CUDA_CHECK(cudaMemcpy(dst, src, nbytes, cudaMemcpyDeviceToDevice));
  } else {
    EMBER_CUDA_CHECK(cudaMemcpyPeer(dst, to, src, from, nbytes));
  }
  return true;
}

void check_a_gpu_side(Device dst_device, Device src_device) {
  EMBER_CHECK(dst_device.is_cuda() || src_device.is_cuda(), DeviceError, "CUDA kernel asked to copy between ",
              src_device, " and ", dst_device);
}

void copy_bytes_on_gpu(void* dst, Device dst_device, const void* src, Device src_device, std::size_t nbytes) {
  if (nbytes == 0) return;
  check_a_gpu_side(dst_device, src_device);
  if (copy_between_gpus(dst, dst_device, src, src_device, nbytes)) return;
  DeviceGuard guard(resolve_device_index(dst_device.is_cuda() ? dst_device : src_device));
  EMBER_CUDA_CHECK(cudaMemcpy(dst, src, nbytes, cudaMemcpyDefault));
}

// Queued on the device's stream, so later kernels on it see the bytes; truly asynchronous
// only from pinned host memory (core/pinned_memory.cpp), where the DMA engine reads the
// buffer itself — from pageable memory CUDA stages and waits. Between two GPUs it is the
// ordered cudaMemcpyPeer above (an async peer copy on one device's stream would not wait for
// the other device's kernels that produce the source).
void copy_bytes_async_on_gpu(void* dst, Device dst_device, const void* src, Device src_device, std::size_t nbytes) {
  if (nbytes == 0) return;
  check_a_gpu_side(dst_device, src_device);
  if (copy_between_gpus(dst, dst_device, src, src_device, nbytes)) return;
  DeviceGuard guard(resolve_device_index(dst_device.is_cuda() ? dst_device : src_device));
  EMBER_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDefault, current_stream()));
  // The pinned host side may be freed (and its block handed out again) before the DMA
  // engine has got to it: its block waits for this point of the stream first.
  if (!src_device.is_cuda()) record_pinned_use(src, current_stream());
  if (!dst_device.is_cuda()) record_pinned_use(dst, current_stream());
}

}  // namespace

EMBER_REGISTER_KERNEL(::ember::copy_bytes_kernel, CUDA, copy_bytes_on_gpu);
EMBER_REGISTER_KERNEL(::ember::copy_bytes_async_kernel, CUDA, copy_bytes_async_on_gpu);

}  // namespace ember::cuda
