// core/views.cpp — ops that return a *view*: a new TensorImpl over the same Storage.
//
// Tutorial §2.3 ("reshaping tensors": .view, .reshape, .T, and matrix transposes).
// A view never copies data. It only computes new sizes, strides and a storage offset
// (core/shape.h explains the element-address formula), so writing through a view changes
// the base tensor and vice versa — exactly PyTorch's aliasing behaviour.
//
// These are the kernel-level versions (namespace ember::native): no autograd. The public
// Tensor methods (autograd/) record the op and call these. The only op here that may copy
// is reshape, which falls back to native::contiguous (core/copy.cpp) when the requested
// shape cannot be expressed with strides over the existing layout.
#include <algorithm>
#include <optional>

#include <ember/core/native.h>

namespace ember::native {

namespace {

// The single place a view is born: same storage and dtype, new geometry, no autograd
// meta (autograd attaches its own), and never a wrapped number (a view is a real tensor).
Tensor make_view(const Tensor& self, Shape sizes, Shape strides, std::int64_t storage_offset) {
  return make_tensor(self.storage(), std::move(sizes), std::move(strides), storage_offset, self.dtype());
}

// PyTorch's stride-compatibility rule for view (ATen's computeStride, re-derived here).
//
// Walk the old dims from the right and group them into "chunks": maximal runs of dims that
// are contiguous *with each other* (stride[d-1] == size[d] * stride[d]). Inside a chunk the
// elements are evenly spaced, so any regrouping of its elements into new dims is a valid
// strided view. A new dim that would need elements from two chunks cannot be expressed
// with one stride: that is the "spans across two contiguous subspaces" failure.
// Returns std::nullopt when no strides exist.
std::optional<Shape> compute_view_strides(IntArrayRef old_sizes, IntArrayRef old_strides, IntArrayRef new_sizes) {
  Shape new_strides(new_sizes.size(), 0);
  if (compute_numel(old_sizes) == 0) {
    // No element is ever addressed, so any strides work; keep the old ones when the shape
    // is unchanged (as PyTorch does) and use row-major strides otherwise.
    if (old_sizes == new_sizes) return to_shape(old_strides);
    return contiguous_strides(new_sizes);
  }
  if (old_sizes.empty()) return contiguous_strides(new_sizes);  // 0-d: all new sizes are 1

  std::int64_t view_dim = static_cast<std::int64_t>(new_sizes.size()) - 1;
  std::int64_t chunk_base_stride = old_strides[old_strides.size() - 1];  // stride of the chunk's innermost dim
  std::int64_t chunk_numel = 1;  // elements in the old chunk so far
  std::int64_t view_numel = 1;   // elements covered by the new dims assigned to this chunk
  for (std::int64_t old_dim = static_cast<std::int64_t>(old_sizes.size()) - 1; old_dim >= 0; --old_dim) {
    chunk_numel *= old_sizes[old_dim];
    bool chunk_ends_here = old_dim == 0 || (old_sizes[old_dim - 1] != 1 &&
                                            old_strides[old_dim - 1] != chunk_numel * chunk_base_stride);
    if (!chunk_ends_here) continue;
    // Hand new dims (from the right) to this chunk until they cover the same elements.
    while (view_dim >= 0 && (view_numel < chunk_numel || new_sizes[view_dim] == 1)) {
      new_strides[view_dim] = view_numel * chunk_base_stride;
      view_numel *= new_sizes[view_dim];
      --view_dim;
    }
    if (view_numel != chunk_numel) return std::nullopt;  // a new dim straddles two chunks
    if (old_dim > 0) {
      chunk_base_stride = old_strides[old_dim - 1];
      chunk_numel = 1;
      view_numel = 1;
    }
  }
  if (view_dim != -1) return std::nullopt;
  return new_strides;
}

// size · stride: the stride PyTorch gives a new size-1 dim placed before a dim (unsqueeze,
// expand's new leading dims). A size-1 dim never steps, so when the product overflows
// (possible only for layouts that address no element twice, e.g. a 0-element tensor with a
// huge stride) any value is correct: keep the dim's own stride.
std::int64_t stride_past(std::int64_t size, std::int64_t stride) {
  std::int64_t product = 0;
  return __builtin_mul_overflow(size, stride, &product) ? stride : product;
}

// "torch.FloatTensor{[2, 3]}" — how PyTorch names a tensor in expand's message.
std::string describe_for_expand(const Tensor& self) {
  return make_message("torch.", scalar_type_name(self.dtype()), "Tensor{", shape_to_string(self.sizes()), "}");
}

}  // namespace

Tensor as_strided(const Tensor& self, IntArrayRef sizes, IntArrayRef strides, std::int64_t storage_offset) {
  EMBER_CHECK(sizes.size() == strides.size(), ShapeError, "mismatch in length of strides and shape");
  EMBER_CHECK(storage_offset >= 0, ValueError, "Tensor: invalid storage offset ", storage_offset);
  check_no_negative_sizes(sizes);
  // A negative stride would walk before the view's first element, where the bounds check
  // below does not look (PyTorch refuses them too).
  for (std::int64_t stride : strides) {
    EMBER_CHECK(stride >= 0, ValueError, "as_strided: Negative strides are not supported at the moment, got strides: ",
                shape_to_string(strides));
  }
  // The view must stay inside the storage: its farthest element is at
  // offset + sum (size_d - 1) * stride_d (nothing is addressed when numel is 0). Computed
  // with overflow checks: a wrapped sum would look small and pass.
  const std::int64_t required = compute_storage_nbytes(sizes, strides, self.element_size(), storage_offset);
  if (required > 0) {
    auto item = static_cast<std::int64_t>(self.element_size());
    auto available = static_cast<std::int64_t>(self.storage()->nbytes());
    EMBER_CHECK(required <= available, ShapeError, "setStorage: sizes ", shape_to_string(sizes), ", strides ",
                shape_to_string(strides), ", storage offset ", storage_offset, ", and itemsize ", item,
                " requiring a storage size of ", required, " are out of bounds for storage of size ", available);
  }
  return make_view(self, to_shape(sizes), to_shape(strides), storage_offset);
}

Tensor view(const Tensor& self, IntArrayRef sizes) {
  Shape new_sizes = infer_size(sizes, self.numel());
  std::optional<Shape> new_strides = compute_view_strides(self.sizes(), self.strides(), new_sizes);
  EMBER_CHECK(new_strides.has_value(), ShapeError,
              "view size is not compatible with input tensor's size and stride (at least one dimension spans "
              "across two contiguous subspaces). Use .reshape(...) instead.");
  return make_view(self, std::move(new_sizes), std::move(*new_strides), self.storage_offset());
}

Tensor reshape(const Tensor& self, IntArrayRef sizes) {
  Shape new_sizes = infer_size(sizes, self.numel());
  if (std::optional<Shape> new_strides = compute_view_strides(self.sizes(), self.strides(), new_sizes)) {
    return make_view(self, std::move(new_sizes), std::move(*new_strides), self.storage_offset());
  }
  // Not expressible as a view: copy into a fresh row-major tensor, which always can be.
  Tensor dense = contiguous(self);
  return make_view(dense, new_sizes, contiguous_strides(new_sizes), dense.storage_offset());
}

Tensor transpose(const Tensor& self, std::int64_t dim0, std::int64_t dim1) {
  std::int64_t ndim = self.dim();
  dim0 = wrap_dim(dim0, ndim);
  dim1 = wrap_dim(dim1, ndim);
  if (ndim == 0) return alias(self);  // a 0-d tensor accepts dims 0/-1 and has nothing to swap
  Shape sizes = self.sizes();
  Shape strides = self.strides();
  std::swap(sizes[dim0], sizes[dim1]);
  std::swap(strides[dim0], strides[dim1]);
  return make_view(self, std::move(sizes), std::move(strides), self.storage_offset());
}

Tensor t(const Tensor& self) {
  EMBER_CHECK(self.dim() <= 2, ShapeError, "t() expects a tensor with <= 2 dimensions, but self is ", self.dim(),
              "D");
  if (self.dim() < 2) return alias(self);  // a vector or a scalar is its own transpose
  return transpose(self, 0, 1);
}

Tensor permute(const Tensor& self, IntArrayRef dims) {
  std::int64_t ndim = self.dim();
  // PyTorch (1.13 and 2.15) prints "permute(sparse_coo)" for dense tensors too; we keep its
  // text so the message can be searched for.
  EMBER_CHECK(static_cast<std::int64_t>(dims.size()) == ndim, ShapeError,
              "permute(sparse_coo): number of dimensions in the tensor input does not match the length of the "
              "desired ordering of dimensions i.e. input.dim() = ",
              ndim, " is not equal to len(dims) = ", dims.size());
  Shape sizes(ndim), strides(ndim);
  std::vector<bool> seen(ndim, false);
  for (std::int64_t i = 0; i < ndim; ++i) {
    std::int64_t source = wrap_dim(dims[i], ndim);
    EMBER_CHECK(!seen[source], ValueError, "permute(): duplicate dims are not allowed.");
    seen[source] = true;
    sizes[i] = self.sizes()[source];
    strides[i] = self.strides()[source];
  }
  return make_view(self, std::move(sizes), std::move(strides), self.storage_offset());
}

Tensor squeeze(const Tensor& self) {
  Shape sizes, strides;
  for (std::int64_t d = 0; d < self.dim(); ++d) {
    if (self.sizes()[d] == 1) continue;
    sizes.push_back(self.sizes()[d]);
    strides.push_back(self.strides()[d]);
  }
  return make_view(self, std::move(sizes), std::move(strides), self.storage_offset());
}

Tensor squeeze(const Tensor& self, std::int64_t dim) {
  dim = wrap_dim(dim, self.dim());
  if (self.dim() == 0 || self.sizes()[dim] != 1) return alias(self);  // only size-1 dims go away
  Shape sizes = self.sizes();
  Shape strides = self.strides();
  sizes.erase(sizes.begin() + dim);
  strides.erase(strides.begin() + dim);
  return make_view(self, std::move(sizes), std::move(strides), self.storage_offset());
}

Tensor unsqueeze(const Tensor& self, std::int64_t dim) {
  dim = wrap_dim(dim, self.dim() + 1);  // one past the last dim is a valid place to insert
  Shape sizes = self.sizes();
  Shape strides = self.strides();
  // The new size-1 dim's stride is never used to step; PyTorch picks the value that keeps
  // a contiguous tensor contiguous: size * stride of the dim it is inserted before.
  std::int64_t new_stride = dim >= self.dim() ? 1 : stride_past(sizes[dim], strides[dim]);
  sizes.insert(sizes.begin() + dim, 1);
  strides.insert(strides.begin() + dim, new_stride);
  return make_view(self, std::move(sizes), std::move(strides), self.storage_offset());
}

Tensor flatten(const Tensor& self, std::int64_t start_dim, std::int64_t end_dim) {
  start_dim = wrap_dim(start_dim, self.dim());
  end_dim = wrap_dim(end_dim, self.dim());
  EMBER_CHECK(start_dim <= end_dim, ValueError, "flatten() has invalid args: start_dim cannot come after end_dim");
  if (self.dim() == 0) return reshape(self, {1});
  if (start_dim == end_dim) return alias(self);
  Shape sizes(self.sizes().begin(), self.sizes().begin() + start_dim);
  std::int64_t merged = 1;
  for (std::int64_t d = start_dim; d <= end_dim; ++d) merged *= self.sizes()[d];
  sizes.push_back(merged);
  sizes.insert(sizes.end(), self.sizes().begin() + end_dim + 1, self.sizes().end());
  return reshape(self, sizes);  // a view when the merged dims are contiguous, else a copy
}

Tensor expand(const Tensor& self, IntArrayRef sizes) {
  auto ndim = static_cast<std::int64_t>(sizes.size());
  std::int64_t self_dim = self.dim();
  EMBER_CHECK(ndim >= self_dim, ShapeError, "expand(", describe_for_expand(self), ", size=", shape_to_string(sizes),
              "): the number of sizes provided (", ndim,
              ") must be greater or equal to the number of dimensions in the tensor (", self_dim, ")");
  Shape new_sizes(ndim), new_strides(ndim);
  // Align the existing dims to the right, like broadcasting; walk from the innermost dim
  // because a new leading dim's stride is derived from the dim to its right.
  for (std::int64_t i = ndim - 1; i >= 0; --i) {
    std::int64_t self_index = i - (ndim - self_dim);  // < 0: a new leading dim
    std::int64_t size = 1, stride = 0;
    if (self_index >= 0) {
      size = self.sizes()[self_index];
      stride = self.strides()[self_index];
    } else if (i + 1 < ndim && self_dim > 0) {
      stride = stride_past(new_sizes[i + 1], new_strides[i + 1]);  // PyTorch's choice; unused when size stays 1
    }
    std::int64_t target = sizes[i];
    if (target == -1) {
      EMBER_CHECK(self_index >= 0, ShapeError, "The expanded size of the tensor (-1) isn't allowed in a leading, "
                  "non-existing dimension ", i);
      target = size;
    }
    if (size != target) {
      EMBER_CHECK(size == 1, ShapeError, "The expanded size of the tensor (", target,
                  ") must match the existing size (", size, ") at non-singleton dimension ", i,
                  ".  Target sizes: ", shape_to_string(sizes), ".  Tensor sizes: ", shape_to_string(self.sizes()));
      EMBER_CHECK(target >= 0, ShapeError, "Trying to create tensor with negative dimension ", target, ": ",
                  shape_to_string(sizes));
      size = target;
      stride = 0;  // every index along this dim reads the same element: the broadcast trick
    }
    new_sizes[i] = size;
    new_strides[i] = stride;
  }
  return make_view(self, std::move(new_sizes), std::move(new_strides), self.storage_offset());
}

Tensor select(const Tensor& self, std::int64_t dim, std::int64_t index) {
  EMBER_CHECK(self.dim() > 0, IndexError, "select() cannot be applied to a 0-dim tensor.");
  dim = wrap_dim(dim, self.dim());
  std::int64_t size = self.sizes()[dim];
  // The wording of PyTorch's x[index] (tensor indexing is how learners reach select).
  EMBER_CHECK(index >= -size && index < size, IndexError, "index ", index, " is out of bounds for dimension ", dim,
              " with size ", size);
  if (index < 0) index += size;
  Shape sizes = self.sizes();
  Shape strides = self.strides();
  std::int64_t offset = self.storage_offset() + index * strides[dim];
  sizes.erase(sizes.begin() + dim);
  strides.erase(strides.begin() + dim);
  return make_view(self, std::move(sizes), std::move(strides), offset);
}

Tensor narrow(const Tensor& self, std::int64_t dim, std::int64_t start, std::int64_t length) {
  EMBER_CHECK(self.dim() > 0, IndexError, "narrow() cannot be applied to a 0-dim tensor.");
  dim = wrap_dim(dim, self.dim());
  EMBER_CHECK(length >= 0, ValueError, "narrow(): length must be non-negative.");
  std::int64_t size = self.sizes()[dim];
  // start may be size itself (an empty narrow at the end) and counts from the end when negative.
  EMBER_CHECK(start >= -size && start <= size, IndexError, "start out of range (expected to be in range of [", -size,
              ", ", size, "], but got ", start, ")");
  if (start < 0) start += size;
  EMBER_CHECK(start <= size - length, IndexError, "start (", start, ") + length (", length,
              ") exceeds dimension size (", size, ").");
  return slice(self, dim, start, start + length, 1);
}

Tensor slice(const Tensor& self, std::int64_t dim, std::optional<std::int64_t> start,
             std::optional<std::int64_t> end, std::int64_t step) {
  EMBER_CHECK(self.dim() > 0, IndexError, "slice() cannot be applied to a 0-dim tensor.");
  dim = wrap_dim(dim, self.dim());
  EMBER_CHECK(step > 0, ValueError, "slice step must be positive");
  std::int64_t size = self.sizes()[dim];
  // Python slicing semantics: negatives count from the end, then everything is clamped to
  // [0, size] and an end before the start gives an empty slice (never an error).
  auto clamp_bound = [size](std::int64_t bound) {
    if (bound < 0) bound += size;
    return std::clamp<std::int64_t>(bound, 0, size);
  };
  std::int64_t first = clamp_bound(start.value_or(0));
  std::int64_t last = std::max(first, clamp_bound(end.value_or(size)));
  Shape sizes = self.sizes();
  Shape strides = self.strides();
  // ceil((last - first) / step), written so that a step near INT64_MAX cannot overflow
  // (the textbook (last - first + step - 1) / step made slice(0, 0, 3, INT64_MAX) size -1).
  sizes[dim] = last == first ? 0 : (last - first - 1) / step + 1;
  std::int64_t offset = self.storage_offset() + first * strides[dim];
  // stride · step can only overflow when the step exceeds the dim, i.e. when at most one
  // element is taken; that element's stride is never used to step, so keep the old one.
  std::int64_t stepped = 0;
  if (!__builtin_mul_overflow(strides[dim], step, &stepped)) strides[dim] = stepped;
  return make_view(self, std::move(sizes), std::move(strides), offset);
}

Tensor alias(const Tensor& self) {
  return make_view(self, self.sizes(), self.strides(), self.storage_offset());
}

}  // namespace ember::native
