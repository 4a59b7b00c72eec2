// core/pinned_memory.cpp — Tensor::is_pinned() and native::pin_memory (PyTorch names).
//
// Tutorial appendix (GPU) and §6: DataLoader(..., pin_memory=True). Ordinary (pageable) host
// memory can be moved by the OS, so the GPU's DMA engine cannot read it directly: a copy to
// the device first goes through a driver-owned staging buffer and blocks the caller.
// Page-locked ("pinned") memory stays put, so a host->device copy from it runs at full link
// speed and can be queued asynchronously (tensor.to(device, /*non_blocking=*/true),
// core/copy.cpp). Core includes no CUDA header: the memory comes from the CUDA layer through
// the hooks (core/cuda_hooks.h -> cuda/cuda_hooks_impl.cpp, cudaHostAlloc underneath).
#include <ember/core/native.h>

#include <ember/core/cuda_hooks.h>
#include <ember/core/error.h>

namespace ember {

namespace native {

bool is_pinned(const Tensor& self) {
  if (!self.is_cpu() || self.storage()->data() == nullptr) return false;
  return cuda::is_pinned_memory(self.storage()->data());
}

Tensor pin_memory(const Tensor& self) {
  // PyTorch: "cannot pin 'torch.cuda.FloatTensor' only dense CPU tensors can be pinned".
  EMBER_CHECK(self.is_cpu(), DeviceError, "cannot pin a tensor on ", self.device(),
              ": only dense CPU tensors can be pinned");
  if (is_pinned(self)) return self;
  // Checked: self may be a huge expanded view whose dense copy's byte count overflows.
  const auto nbytes = static_cast<std::size_t>(compute_storage_nbytes(self.sizes(), self.element_size()));
  // Throws "Cannot access accelerator device when none is available." without a GPU.
  void* memory = cuda::allocate_pinned_memory(nbytes);
  Storage storage = std::make_shared<StorageImpl>(memory, nbytes, kCPU,
                                                  [](void* pointer) { cuda::free_pinned_memory(pointer); });
  // A contiguous copy (PyTorch keeps the source's strides by copying its whole storage; a
  // dense copy is what DataLoader batches and to(non_blocking) want).
  Tensor out = make_tensor(std::move(storage), self.sizes(), contiguous_strides(self.sizes()), 0, self.dtype());
  copy_(out, self);
  return out;
}

}  // namespace native

bool Tensor::is_pinned() const { return native::is_pinned(*this); }

}  // namespace ember
