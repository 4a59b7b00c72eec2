// autograd/view_ops.cpp — differentiable views and copies, and sum_to.
//
// Tutorial §2.3–§2.4 (reshape/view/.T) and §4. A view's backward puts the gradient back
// into the input's layout: view/reshape/squeeze/unsqueeze/flatten reshape it back,
// transpose/permute undo the permutation, expand sums over the expanded dims, and
// select/narrow/slice scatter the gradient into zeros of the input's shape.
// Every view's output is also tracked as a view of its base (track_view, view_tracking.h),
// so an in-place op through it, or on its base, keeps both histories right.
#include <algorithm>
#include <numeric>

#include <ember/autograd/function.h>
#include <ember/autograd/ops.h>
#include <ember/autograd/view_tracking.h>
#include <ember/core/factories.h>
#include <ember/core/native.h>
#include <ember/core/profiler.h>

namespace ember {

using autograd::needs_grad;
using autograd::Node;
using autograd::record;
using autograd::track_view;
using autograd::TensorList;

Tensor sum_to(const Tensor& gradient, IntArrayRef sizes) {
  EMBER_RECORD_FUNCTION("sum_to", gradient);
  if (IntArrayRef(gradient.sizes()) == sizes) return gradient;
  // Broadcasting (1) prepended dims and (2) stretched size-1 dims: sum both away.
  const std::int64_t leading = gradient.dim() - static_cast<std::int64_t>(sizes.size());
  EMBER_CHECK(leading >= 0, ShapeError, "sum_to: gradient of shape ", shape_to_string(gradient.sizes()),
              " cannot be summed to shape ", shape_to_string(sizes));
  DimVector dims;
  for (std::int64_t d = 0; d < leading; ++d) dims.push_back(d);
  bool stretched = false;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    std::int64_t d = leading + static_cast<std::int64_t>(i);
    if (sizes[i] == 1 && gradient.size(d) != 1) {
      dims.push_back(d);
      stretched = true;
    }
  }
  if (dims.empty()) return ember::reshape(gradient, sizes);
  // Only prepended dims (a bias's gradient): summing them away leaves exactly `sizes`.
  if (!stretched) return ember::sum(gradient, dims, /*keepdim=*/false);
  return ember::reshape(ember::sum(gradient, dims, /*keepdim=*/true), sizes);
}

namespace {
// The common case: a view whose backward reshapes the gradient back to the input's sizes.
Tensor record_reshape_like(const Tensor& self, Tensor out, const char* name) {
  if (needs_grad(self)) {
    Shape sizes = self.sizes();
    auto node = record(name, {self}, out);
    node->set_backward([sizes](Node&, const TensorList& grads) -> TensorList {
      return {ember::reshape(grads[0], sizes)};
    });
  }
  return track_view(self, out);  // a no-op when the reshape had to copy
}

// select/narrow/slice backward: zeros of the input's shape with the gradient written at
// positions first, first + step, ... along `dim` (PyTorch's slice_backward). Recording a
// graph (create_graph), it is index_add into zeros, itself differentiable; otherwise the
// gradient is copied into a strided view of the zeros, with no index tensor to build or read
// (the GPT's q, k, v slices spent 5 % of its step in index_add; docs/performance.md).
Tensor scatter_into_zeros(const Tensor& grad, const Shape& sizes, std::int64_t dim, std::int64_t first,
                          std::int64_t step) {
  Tensor base = zeros(sizes, grad.options());
  const std::int64_t count = grad.size(dim);
  if (!needs_grad(grad)) {
    native::copy_(native::slice(base, dim, first, first + count * step, step), grad);
    return base;
  }
  Tensor positions = arange(first, first + count * step, step, TensorOptions().dtype(kInt64).device(grad.device()));
  return ember::index_add(base, dim, positions, grad);
}
}  // namespace

Tensor view(const Tensor& self, IntArrayRef sizes) {
  EMBER_RECORD_VIEW("view", self);
  return record_reshape_like(self, native::view(self, sizes), "ViewBackward0");
}

Tensor reshape(const Tensor& self, IntArrayRef sizes) {
  EMBER_RECORD_VIEW("reshape", self);
  Tensor out = native::reshape(self, sizes);
  // PyTorch's reshape is a view when the strides allow it (ViewBackward0; PyTorch 1.13 named
  // it ReshapeAliasBackward0), otherwise a copy (_unsafe_view).
  bool is_view = out.storage().get() == self.storage().get();
  return record_reshape_like(self, out, is_view ? "ViewBackward0" : "UnsafeViewBackward0");
}

Tensor unsafe_view(const Tensor& self, IntArrayRef sizes) {
  EMBER_RECORD_VIEW("unsafe_view", self);
  // PyTorch's _unsafe_view: the result of a composite op (matmul) reshaped to its final
  // shape. Recorded as a plain node (never marked a view), so the caller may modify the
  // result in place, as PyTorch allows for matmul's output.
  Tensor out = native::reshape(self, sizes);
  if (needs_grad(self)) {
    Shape self_sizes = self.sizes();
    auto node = record("UnsafeViewBackward0", {self}, out);
    node->set_backward([self_sizes](Node&, const TensorList& grads) -> TensorList {
      return {ember::reshape(grads[0], self_sizes)};
    });
  }
  return out;
}

Tensor squeeze(const Tensor& self) {
  EMBER_RECORD_VIEW("squeeze", self);
  return record_reshape_like(self, native::squeeze(self), "SqueezeBackward0");
}
Tensor squeeze(const Tensor& self, std::int64_t dim) {
  EMBER_RECORD_VIEW("squeeze", self);
  return record_reshape_like(self, native::squeeze(self, dim), "SqueezeBackward1");
}
Tensor unsqueeze(const Tensor& self, std::int64_t dim) {
  EMBER_RECORD_VIEW("unsqueeze", self);
  return record_reshape_like(self, native::unsqueeze(self, dim), "UnsqueezeBackward0");
}
Tensor flatten(const Tensor& self, std::int64_t start_dim, std::int64_t end_dim) {
  EMBER_RECORD_VIEW("flatten", self);
  Tensor out = native::flatten(self, start_dim, end_dim);
  bool is_view = out.storage().get() == self.storage().get();
  return record_reshape_like(self, out, is_view ? "ViewBackward0" : "UnsafeViewBackward0");
}

Tensor transpose(const Tensor& self, std::int64_t dim0, std::int64_t dim1) {
  EMBER_RECORD_VIEW("transpose", self);
  Tensor out = native::transpose(self, dim0, dim1);
  if (needs_grad(self)) {
    auto node = record("TransposeBackward0", {self}, out);
    node->set_backward([dim0, dim1](Node&, const TensorList& grads) -> TensorList {
      return {ember::transpose(grads[0], dim0, dim1)};  // a swap is its own inverse
    });
  }
  return track_view(self, out);
}

Tensor t(const Tensor& self) {
  EMBER_RECORD_VIEW("t", self);
  Tensor out = native::t(self);
  if (needs_grad(self)) {
    auto node = record("TBackward0", {self}, out);
    node->set_backward([](Node&, const TensorList& grads) -> TensorList { return {ember::t(grads[0])}; });
  }
  return track_view(self, out);
}

Tensor permute(const Tensor& self, IntArrayRef dims) {
  EMBER_RECORD_VIEW("permute", self);
  Tensor out = native::permute(self, dims);
  if (needs_grad(self)) {
    // Output dim i is input dim dims[i]; the inverse permutation sends it back.
    std::vector<std::int64_t> inverse(dims.size());
    for (std::size_t i = 0; i < dims.size(); ++i) {
      inverse[static_cast<std::size_t>(wrap_dim(dims[i], self.dim()))] = static_cast<std::int64_t>(i);
    }
    auto node = record("PermuteBackward0", {self}, out);
    node->set_backward([inverse](Node&, const TensorList& grads) -> TensorList {
      return {ember::permute(grads[0], inverse)};
    });
  }
  return track_view(self, out);
}

Tensor expand(const Tensor& self, IntArrayRef sizes) {
  EMBER_RECORD_VIEW("expand", self);
  Tensor out = native::expand(self, sizes);
  if (needs_grad(self)) {
    // Every copy of an expanded element received gradient: add them up.
    Shape self_sizes = self.sizes();
    auto node = record("ExpandBackward0", {self}, out);
    node->set_backward([self_sizes](Node&, const TensorList& grads) -> TensorList {
      return {sum_to(grads[0], self_sizes)};
    });
  }
  return track_view(self, out);
}

Tensor select(const Tensor& self, std::int64_t dim, std::int64_t index) {
  EMBER_RECORD_VIEW("select", self);
  Tensor out = native::select(self, dim, index);
  if (needs_grad(self)) {
    Shape sizes = self.sizes();
    std::int64_t d = wrap_dim(dim, self.dim());
    std::int64_t i = index < 0 ? index + sizes[static_cast<std::size_t>(d)] : index;
    auto node = record("SelectBackward0", {self}, out);
    node->set_backward([sizes, d, i](Node&, const TensorList& grads) -> TensorList {
      return {scatter_into_zeros(ember::unsqueeze(grads[0], d), sizes, d, i, 1)};
    });
  }
  return track_view(self, out);
}

Tensor slice(const Tensor& self, std::int64_t dim, std::optional<std::int64_t> start,
             std::optional<std::int64_t> end, std::int64_t step) {
  EMBER_RECORD_VIEW("slice", self);
  Tensor out = native::slice(self, dim, start, end, step);
  if (needs_grad(self)) {
    // The first index taken, normalised as Python slicing does: a negative start counts
    // from the end, and it is clamped into [0, size].
    Shape sizes = self.sizes();
    std::int64_t d = wrap_dim(dim, self.dim());
    std::int64_t size = self.size(d);
    std::int64_t first = start.value_or(0);
    if (first < 0) first += size;
    first = std::clamp<std::int64_t>(first, 0, size);
    auto node = record("SliceBackward0", {self}, out);
    node->set_backward([sizes, d, first, step](Node&, const TensorList& grads) -> TensorList {
      return {scatter_into_zeros(grads[0], sizes, d, first, step)};
    });
  }
  return track_view(self, out);
}

Tensor narrow(const Tensor& self, std::int64_t dim, std::int64_t start, std::int64_t length) {
  EMBER_RECORD_VIEW("narrow", self);
  // narrow is a slice with step 1 (PyTorch records SliceBackward0 for it too). The checks
  // and messages are native::narrow's.
  Tensor out = native::narrow(self, dim, start, length);
  if (!needs_grad(self)) return track_view(self, out);
  std::int64_t d = wrap_dim(dim, self.dim());
  std::int64_t first = start < 0 ? start + self.size(d) : start;
  return ember::slice(self, d, first, first + length, 1);
}

Tensor contiguous(const Tensor& self) {
  EMBER_RECORD_FUNCTION("contiguous", self);
  Tensor out = native::contiguous(self);
  if (out.is_same(self)) return self;  // already contiguous: the same tensor, no node
  if (needs_grad(self)) {
    auto node = record("CloneBackward0", {self}, out);
    node->set_backward([](Node&, const TensorList& grads) -> TensorList { return {grads[0]}; });
  }
  return out;
}

Tensor clone(const Tensor& self) {
  EMBER_RECORD_FUNCTION("clone", self);
  Tensor out = native::clone(self);
  if (needs_grad(self)) {
    auto node = record("CloneBackward0", {self}, out);
    node->set_backward([](Node&, const TensorList& grads) -> TensorList { return {grads[0]}; });
  }
  return out;
}

Tensor to(const Tensor& self, DType dtype) {
  EMBER_RECORD_FUNCTION("to", self);
  Tensor out = native::to_dtype(self, dtype);
  if (out.is_same(self)) return self;
  if (needs_grad(self) && is_floating_point(dtype)) {
    DType original = self.dtype();
    auto node = record("ToCopyBackward0", {self}, out);
    node->set_backward([original](Node&, const TensorList& grads) -> TensorList {
      return {ember::to(grads[0], original)};
    });
  }
  return out;
}

Tensor to(const Tensor& self, Device device, bool non_blocking) {
  EMBER_RECORD_FUNCTION("to", self);
  Tensor out = native::to_device(self, device, non_blocking);
  if (out.is_same(self)) return self;
  if (needs_grad(self)) {
    Device original = self.device();
    auto node = record("ToCopyBackward0", {self}, out);
    node->set_backward([original](Node&, const TensorList& grads) -> TensorList {
      return {ember::to(grads[0], original)};
    });
  }
  return out;
}

}  // namespace ember
