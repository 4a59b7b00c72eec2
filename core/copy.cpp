// core/copy.cpp — contiguous, clone, to(dtype), to(device[, non_blocking]), copy_ and fill_.
//
// Tutorial §2.2 (.to(torch.float32)), §2.4 (.contiguous() after a transpose) and §9 (moving
// tensors between CPU and GPU). Everything here is one operation at heart: copy_(dst, src),
// "write src's values into dst's elements", where src is broadcast to dst's shape and cast to
// dst's dtype. The TensorIterator (core/tensor_iterator.h) turns any pair of layouts into one
// strided loop, so a transpose-then-contiguous and a float-to-int cast share the same code.
// The other functions allocate a destination and call it.
//
// Across devices no single kernel can see both memories. The rule used here: bring the data
// to a dense buffer of the right shape and dtype on one side, move the raw bytes with the
// non-CPU backend's copy_bytes (cudaMemcpy host<->device, cudaMemcpyPeer GPU<->GPU), and do
// any remaining strided copy on the destination's own device.
#include <ember/core/native.h>

#include <ember/core/backend.h>
#include <ember/core/cuda_hooks.h>
#include <ember/core/tensor_iterator.h>
#include <ember/core/value_range.h>

namespace ember::native {

namespace {

// True when `wanted` names the device `actual` is on ("cuda", index -1, matches "cuda:0").
bool device_matches(Device actual, Device wanted) {
  return actual.type() == wanted.type() && (!wanted.has_index() || wanted.index() == actual.index());
}

std::size_t nbytes_of(const Tensor& tensor) { return static_cast<std::size_t>(tensor.numel()) * tensor.element_size(); }

// A fresh contiguous tensor shaped like `like`, with the given dtype and device.
Tensor empty_with(IntArrayRef sizes, DType dtype, Device device) {
  return empty(sizes, TensorOptions().dtype(dtype).device(device));
}

// dst <- src without touching the version counter (for tensors created right here).
// non_blocking: a dense host->device copy from pinned memory is only queued (see below).
void copy_values(const Tensor& dst, const Tensor& src, bool non_blocking = false) {
  // src may be broadcast to dst, never the other way round: copy_ writes every element of
  // dst exactly once. broadcast_shapes throws PyTorch's message for incompatible sizes.
  Shape broadcast = broadcast_shapes(dst.sizes(), src.sizes());
  EMBER_CHECK(broadcast == dst.sizes(), ShapeError, "output with shape ", shape_to_string(dst.sizes()),
              " doesn't match the broadcast shape ", shape_to_string(broadcast));
  if (dst.numel() == 0) return;

  if (device_matches(dst.device(), src.device()) || device_matches(src.device(), dst.device())) {
    StridedPlan plan = make_strided_plan(dst, {src});
    copy_kernel(dst.device(), plan);
    return;
  }

  if (dst.is_cpu() && !src.is_cpu()) {
    // device -> host: make src dense on its device, move the bytes, then cast/broadcast/
    // scatter into dst on the CPU.
    Tensor dense = contiguous(src);
    Tensor host = empty_with(src.sizes(), src.dtype(), kCPU);
    copy_bytes_kernel(src.device(), host.data_ptr(), kCPU, dense.data_ptr(), src.device(), nbytes_of(dense));
    copy_values(dst, host);
  } else if (non_blocking && src.is_cpu() && !dst.is_cpu() && src.dtype() == dst.dtype() && src.sizes() == dst.sizes() &&
             src.is_contiguous() && dst.is_contiguous() && is_pinned(src)) {
    // The DMA engine reads pinned memory on its own, so the copy is queued on the device's
    // stream and the call returns; kernels queued later on that stream see the data. As in
    // PyTorch, the caller must not overwrite src until the device has read it.
    copy_bytes_async_kernel(dst.device(), dst.data_ptr(), dst.device(), src.data_ptr(), kCPU, nbytes_of(src));
  } else if (src.is_cpu() && !dst.is_cpu()) {
    // host -> device: build exactly dst's values (shape, dtype) densely on the CPU, move
    // the bytes, and if dst is not dense itself finish with a strided copy on the device.
    Tensor staging = empty_with(dst.sizes(), dst.dtype(), kCPU);
    copy_values(staging, src);
    Tensor dense_dst = dst.is_contiguous() ? dst : empty_with(dst.sizes(), dst.dtype(), dst.device());
    copy_bytes_kernel(dst.device(), dense_dst.data_ptr(), dst.device(), staging.data_ptr(), kCPU,
                                         nbytes_of(staging));
    if (!dense_dst.is_same(dst)) copy_values(dst, dense_dst);
  } else {
    // Two GPUs (cuda:0 -> cuda:1): make src dense on its own device, move the bytes device
    // to device (cudaMemcpyPeer: directly over NVLink/PCIe when the GPUs can reach each
    // other, staged by the driver otherwise — never through ember's host buffers), then
    // cast/broadcast/scatter on dst's device if dst is not simply a dense twin of src.
    Tensor dense = contiguous(src);
    const bool dense_twin = dst.is_contiguous() && dst.dtype() == src.dtype() && dst.sizes() == src.sizes();
    Tensor landed = dense_twin ? dst : empty_with(src.sizes(), src.dtype(), dst.device());
    copy_bytes_kernel(dst.device(), landed.data_ptr(), dst.device(), dense.data_ptr(), src.device(),
                                         nbytes_of(dense));
    if (!landed.is_same(dst)) copy_values(dst, landed);
  }
}

}  // namespace

Tensor contiguous(const Tensor& self) { return self.is_contiguous() ? self : clone(self); }

Tensor clone(const Tensor& self) {
  Tensor out = empty_with(self.sizes(), self.dtype(), self.device());
  copy_values(out, self);
  return out;
}

Tensor to_dtype(const Tensor& self, DType dtype) {
  if (self.dtype() == dtype) return self;
  Tensor out = empty_with(self.sizes(), dtype, self.device());
  copy_values(out, self);
  return out;
}

Tensor widened(const Tensor& self) {
  return self.defined() && is_reduced_floating_point(self.dtype()) ? to_dtype(self, DType::Float32) : self;
}

Tensor to_device(const Tensor& self, Device device, bool non_blocking) {
  // "cuda" means the current GPU: name it first (PyTorch's ensure_has_index), so the new
  // tensor reports e.g. cuda:0, and a tensor on cuda:1 moves when cuda:0 is current.
  if (device.is_cuda() && !device.has_index()) device = Device(DeviceType::CUDA, cuda::current_device());
  if (device_matches(self.device(), device)) return self;
  Tensor out = empty_with(self.sizes(), self.dtype(), device);
  copy_values(out, self, non_blocking);
  return out;
}

void copy_(const Tensor& dst, const Tensor& src) {
  check_no_internal_overlap(dst);
  // x.copy_(x), or a view with x's very layout: every element already holds its value.
  // (PyTorch returns early too; running the copy would hand memcpy identical ranges.)
  const bool same_elements = src.dtype() == dst.dtype() && src.sizes() == dst.sizes() &&
                             memory_overlap(dst, src) == MemoryOverlap::Full;
  if (!same_elements) copy_values(dst, src);  // refuses a partial overlap (make_strided_plan)
  dst.bump_version();  // an in-place write: autograd must see that dst changed
}

void fill_(const Tensor& self, Scalar value) {
  // 300 into uint8, 1e20 or NaN into int64: PyTorch's range error, never a wrapped value or
  // an undefined cast in the kernel (core/value_range.h has the rules).
  check_scalar_fits(value, self.dtype());
  if (self.numel() > 0) {
    StridedPlan plan = make_strided_plan(self, {});
    fill_kernel(self.device(), plan, value);
  }
  self.bump_version();
}

}  // namespace ember::native
