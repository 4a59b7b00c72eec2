// core/indexing.cpp — joining tensors (cat, stack) and index-driven ops: index_select,
// index_add, gather, scatter_add, one_hot (on the tensor's device: backend one_hot).
//
// Tutorial §2 and the training loops of §5–§7: cat/stack build batches (the DataLoader's
// collate), gather / one_hot / index_select appear in losses and embeddings, and
// index_add / scatter_add are their gradients (autograd/ uses them in backward).
//
// The index ops all reduce to one picture (core/strided_index.h, IndexPlan): the tensors
// are made contiguous and viewed as [outer, size, inner] around the indexed dim, so a
// backend kernel only needs three nested loops. Index values are checked here, on the
// host, before any kernel runs: kernels never validate input (core/backend.h).
#include <algorithm>

#include <ember/core/backend.h>
#include <ember/core/native.h>

namespace ember::native {

namespace {

// [outer, size, inner] around `dim` of a shape: outer = product of the dims before it,
// inner = product of the dims after it. A 0-d tensor is [1, 1, 1].
struct Around {
  std::int64_t outer = 1, size = 1, inner = 1;
};
Around split_around(IntArrayRef sizes, std::int64_t dim) {
  Around result;
  for (std::int64_t d = 0; d < static_cast<std::int64_t>(sizes.size()); ++d) {
    if (d < dim) result.outer *= sizes[d];
    else if (d == dim) result.size = sizes[d];
    else result.inner *= sizes[d];
  }
  return result;
}

// The index values as int64 on the CPU (for checking, and what every kernel reads).
Tensor index_as_int64(const Tensor& index) {
  return contiguous(to_dtype(to_device(index, kCPU), DType::Int64));
}

// Every value of a CPU int64 index must lie in [0, size). `message` receives the bad value.
template <class MakeMessage>
void check_index_range(const Tensor& index_cpu, std::int64_t size, MakeMessage message) {
  const auto* values = index_cpu.data_ptr<std::int64_t>();
  for (std::int64_t i = 0; i < index_cpu.numel(); ++i) {
    if (values[i] < 0 || values[i] >= size) throw IndexError(message(values[i]));
  }
}

// The index on the operands' device (kernels read it where they run).
Tensor index_on(const Tensor& index_cpu, Device device) { return contiguous(to_device(index_cpu, device)); }

// The PyTorch 1-D rule of index_select / index_add: the index is a vector or a scalar.
void check_index_is_vector(const Tensor& index, const char* message) {
  EMBER_CHECK(index.dim() <= 1, IndexError, message);
}

// self narrowed, in every dim but `skip_dim`, to the sizes of `index` (gather and
// scatter_add allow an index smaller than self / src there, and only touch that corner).
// skip_dim = -1 narrows every dim (scatter_add's src may be larger in `dim` too).
Tensor narrow_to_index(const Tensor& self, std::int64_t skip_dim, const Tensor& index) {
  Tensor result = self;
  for (std::int64_t d = 0; d < self.dim(); ++d) {
    if (d != skip_dim && index.size(d) != self.size(d)) result = narrow(result, d, 0, index.size(d));
  }
  return result;
}

// For gather / scatter_add messages: "[1, 5]".
std::string sizes_of(const Tensor& t) { return shape_to_string(t.sizes()); }

}  // namespace

// ------------------------------------------------------------------ cat / stack

Tensor cat(const std::vector<Tensor>& tensors, std::int64_t dim) {
  EMBER_CHECK(!tensors.empty(), ValueError, "torch.cat(): expected a non-empty list of Tensors");
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    EMBER_CHECK(tensors[i].dim() > 0, ShapeError, "zero-dimensional tensor (at position ", i,
                ") cannot be concatenated");
    check_same_device(tensors[0], tensors[i]);
  }
  // Legacy rule kept by PyTorch: a 1-D tensor with no elements is skipped whatever the
  // other shapes are (old code used torch.Tensor() as an "empty" start value).
  auto skipped = [](const Tensor& t) { return t.dim() == 1 && t.numel() == 0; };
  DType dtype = tensors[0].dtype();
  for (const Tensor& t : tensors) dtype = promote_types(dtype, t.dtype());

  auto reference = std::find_if(tensors.begin(), tensors.end(), [&](const Tensor& t) { return !skipped(t); });
  if (reference == tensors.end()) return empty({0}, tensors[0].options().dtype(dtype));  // all skipped
  std::int64_t ndim = reference->dim();
  dim = wrap_dim(dim, ndim);

  Shape out_sizes = reference->sizes();
  out_sizes[dim] = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (skipped(t)) continue;
    EMBER_CHECK(t.dim() == ndim, ShapeError, "Tensors must have same number of dimensions: got ", ndim, " and ",
                t.dim());
    for (std::int64_t d = 0; d < ndim; ++d) {
      EMBER_CHECK(d == dim || t.size(d) == reference->size(d), ShapeError, "Sizes of tensors must match except in "
                  "dimension ", dim, ". Expected size ", reference->size(d), " but got size ", t.size(d),
                  " for tensor number ", i, " in the list.");
    }
    EMBER_CHECK(!__builtin_add_overflow(out_sizes[dim], t.size(dim), &out_sizes[dim]), ShapeError,
                "torch.cat(): the sizes of the tensors in dimension ", dim, " add up to more than 2^63 - 1");
  }

  // Each input is copied (and cast to the promoted dtype) into its slab of the output.
  Tensor out = empty(out_sizes, reference->options().dtype(dtype));
  std::int64_t offset = 0;
  for (const Tensor& t : tensors) {
    if (skipped(t) || t.size(dim) == 0) continue;
    copy_(narrow(out, dim, offset, t.size(dim)), t);
    offset += t.size(dim);
  }
  return out;
}

Tensor stack(const std::vector<Tensor>& tensors, std::int64_t dim) {
  EMBER_CHECK(!tensors.empty(), ValueError, "stack expects a non-empty TensorList");
  for (std::size_t i = 1; i < tensors.size(); ++i) {
    EMBER_CHECK(tensors[i].sizes() == tensors[0].sizes(), ShapeError, "stack expects each tensor to be equal size, "
                "but got ", sizes_of(tensors[0]), " at entry 0 and ", sizes_of(tensors[i]), " at entry ", i);
  }
  // stack = give every tensor a new size-1 dim at `dim`, then cat along it.
  dim = wrap_dim(dim, tensors[0].dim() + 1);
  std::vector<Tensor> expanded;
  expanded.reserve(tensors.size());
  for (const Tensor& t : tensors) expanded.push_back(unsqueeze(t, dim));
  return cat(expanded, dim);
}

// ------------------------------------------------------------------ index_select / index_add

Tensor index_select(const Tensor& self, std::int64_t dim, const Tensor& index) {
  dim = wrap_dim(dim, self.dim());
  EMBER_CHECK(index.dtype() == DType::Int64 || index.dtype() == DType::Int32, DTypeError,
              "index_select(): Expected dtype int32 or int64 for index");
  check_index_is_vector(index, "index_select(): Index is supposed to be a vector");
  EMBER_CHECK(self.dim() > 0 || index.numel() == 1, IndexError,
              "index_select(): Index to scalar can have only 1 value, got ", index.numel(), " value(s)");
  Tensor index_cpu = index_as_int64(index);
  const std::int64_t self_size = self.dim() == 0 ? 1 : self.size(dim);
  check_index_range(index_cpu, self_size, [](std::int64_t) { return std::string("index out of range in self"); });

  Shape out_sizes = self.sizes();
  if (self.dim() > 0) out_sizes[dim] = index.numel();
  Tensor input = contiguous(self);
  Tensor out = empty(out_sizes, self.options());
  Tensor index_device = index_on(index_cpu, self.device());
  Around shape = split_around(self.sizes(), dim);
  IndexPlan plan;
  plan.device = self.device().index();
  plan.outer = shape.outer;
  plan.self_size = shape.size;
  plan.index_count = index.numel();
  plan.inner = shape.inner;
  plan.source = input.data_ptr();
  plan.output = out.data_ptr();
  plan.index = static_cast<const std::int64_t*>(index_device.data_ptr());
  plan.dtype = self.dtype();
  if (out.numel() > 0) index_select_kernel(self.device(), plan);
  return out;
}

Tensor index_add(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& source) {
  check_same_device(self, source);
  dim = wrap_dim(dim, self.dim());
  EMBER_CHECK(index.dtype() == DType::Int64 || index.dtype() == DType::Int32, DTypeError,
              "index_add_(): Expected dtype int32/int64 for index but got: ", scalar_type_name(index.dtype()));
  EMBER_CHECK(index.dim() <= 1, IndexError, "index_add_(): Index is supposed to be a vector, but got dim: ",
              index.dim(), " with type: ", scalar_type_name(index.dtype()), " and size: ", sizes_of(index));
  EMBER_CHECK(self.dtype() == source.dtype(), DTypeError, "index_add_(): self (", scalar_type_name(self.dtype()),
              ") and source (", scalar_type_name(source.dtype()), ") must have the same scalar type");
  const std::int64_t source_count = source.dim() == 0 ? 1 : source.size(dim);
  EMBER_CHECK(index.numel() == source_count, ShapeError, "index_add_(): Number of indices (", index.numel(),
              ") should be equal to source.size(dim): (", source_count, "), for dim: ", dim);
  // The source has self's shape except along dim (PyTorch 2.x; 1.13 broadcast each source
  // slice into self's, so a [2, 1] source could add into [3, 4]).
  bool same_shape_off_dim = source.dim() == self.dim();
  for (std::int64_t d = 0; same_shape_off_dim && d < self.dim(); ++d)
    same_shape_off_dim = d == dim || source.size(d) == self.size(d);
  EMBER_CHECK(same_shape_off_dim, ShapeError,
              "source tensor shape must match self tensor shape, excluding the specified dimension. Got self.shape = ",
              shape_to_string(self.sizes()), " source.shape = ", shape_to_string(source.sizes()));
  Tensor index_cpu = index_as_int64(index);
  const std::int64_t self_size = self.dim() == 0 ? 1 : self.size(dim);
  check_index_range(index_cpu, self_size, [&](std::int64_t value) {
    return make_message("index ", value, " is out of bounds for dimension ", dim, " with size ", self_size);
  });
  // bfloat16/float16: the adds accumulate in float32 and round once, as PyTorch's CPU
  // index_add_ does (measured: not one rounding per addition).
  if (is_reduced_floating_point(self.dtype()))
    return to_dtype(index_add(widened(self), dim, index, widened(source)), self.dtype());

  Tensor out = clone(self);
  Shape source_sizes = self.sizes();
  if (self.dim() > 0) source_sizes[dim] = index.numel();
  // Size-1 dims of source broadcast; a 0-d self takes its single source value as it is.
  Tensor source_full = self.dim() == 0 ? contiguous(source) : contiguous(expand(source, source_sizes));
  Tensor index_device = index_on(index_cpu, self.device());
  Around shape = split_around(self.sizes(), dim);
  IndexPlan plan;
  plan.device = self.device().index();
  plan.outer = shape.outer;
  plan.self_size = shape.size;
  plan.index_count = index.numel();
  plan.inner = shape.inner;
  plan.source = source_full.data_ptr();
  plan.output = out.data_ptr();
  plan.index = static_cast<const std::int64_t*>(index_device.data_ptr());
  plan.dtype = self.dtype();
  if (source_full.numel() > 0) index_add_kernel(self.device(), plan);
  return out;
}

// ------------------------------------------------------------------ gather / scatter_add

Tensor gather(const Tensor& self, std::int64_t dim, const Tensor& index) {
  check_same_device(self, index);
  dim = wrap_dim(dim, self.dim());
  // int32 indices too (PyTorch 2.x; 1.13 took int64 only).
  EMBER_CHECK(index.dtype() == DType::Int64 || index.dtype() == DType::Int32, DTypeError,
              "gather(): Expected dtype int32/int64 for index");
  EMBER_CHECK(index.dim() == self.dim() || (self.dim() <= 1 && index.dim() <= 1), ShapeError,
              "Index tensor must have the same number of dimensions as input tensor");
  const bool same_rank = index.dim() == self.dim();
  for (std::int64_t d = 0; same_rank && d < index.dim(); ++d) {
    EMBER_CHECK(d == dim || index.size(d) <= self.size(d), ShapeError, "Size does not match at dimension ", d,
                " expected index ", sizes_of(index), " to be no larger than self ", sizes_of(self),
                " apart from dimension ", dim);
  }
  const std::int64_t self_size = self.dim() == 0 ? 1 : self.size(dim);
  Tensor index_cpu = index_as_int64(index);
  check_index_range(index_cpu, self_size, [&](std::int64_t value) {
    return make_message("index ", value, " is out of bounds for dimension ", dim, " with size ", self_size);
  });

  // Only the corner of self that the index spans is read: narrow, then make it dense.
  Tensor input = same_rank ? contiguous(narrow_to_index(self, dim, index)) : contiguous(self);
  Tensor out = empty(index.sizes(), self.options());
  Tensor index_device = index_on(index_cpu, self.device());
  Around shape = split_around(index.sizes(), dim);
  IndexPlan plan;
  plan.device = self.device().index();
  plan.outer = shape.outer;
  plan.self_size = self_size;
  plan.index_count = shape.size;
  plan.inner = shape.inner;
  plan.source = input.data_ptr();
  plan.output = out.data_ptr();
  plan.index = static_cast<const std::int64_t*>(index_device.data_ptr());
  plan.dtype = self.dtype();
  if (out.numel() > 0) gather_kernel(self.device(), plan);
  return out;
}

Tensor scatter_add(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& source) {
  check_same_device(self, index);
  check_same_device(self, source);
  dim = wrap_dim(dim, self.dim());
  // int32 indices too (PyTorch 2.x; 1.13 took int64 only).
  EMBER_CHECK(index.dtype() == DType::Int64 || index.dtype() == DType::Int32, DTypeError,
              "scatter(): Expected dtype int32/int64 for index");
  EMBER_CHECK(self.dtype() == source.dtype(), DTypeError, "scatter(): Expected self.dtype to be equal to src.dtype");
  EMBER_CHECK(index.dim() == self.dim() || (self.dim() <= 1 && index.dim() <= 1), ShapeError,
              "Index tensor must have the same number of dimensions as self tensor");
  EMBER_CHECK(index.dim() == source.dim() || (source.dim() <= 1 && index.dim() <= 1), ShapeError,
              "Index tensor must have the same number of dimensions as src tensor");
  const bool same_rank = self.dim() == index.dim() && source.dim() == index.dim();
  for (std::int64_t d = 0; same_rank && d < index.dim(); ++d) {
    bool fits_self = d == dim || index.size(d) <= self.size(d);
    EMBER_CHECK(fits_self && index.size(d) <= source.size(d), ShapeError, "Expected index ", sizes_of(index),
                " to be no larger than self ", sizes_of(self), " apart from dimension ", dim,
                " and to be no larger size than src ", sizes_of(source));
  }
  const std::int64_t self_size = self.dim() == 0 ? 1 : self.size(dim);
  Tensor index_cpu = index_as_int64(index);
  check_index_range(index_cpu, self_size, [&](std::int64_t value) {
    return make_message("index ", value, " is out of bounds for dimension ", dim, " with size ", self_size);
  });
  // bfloat16/float16: accumulated in float32 and rounded once, as PyTorch's scatter_add_.
  if (is_reduced_floating_point(self.dtype()))
    return to_dtype(scatter_add(widened(self), dim, index, widened(source)), self.dtype());

  Tensor out = clone(self);
  if (index.numel() == 0) return out;
  // The kernel writes a dense [outer, self_size, inner] block whose outer/inner are the
  // index's. When the index is smaller than self in those dims, that block is a strided
  // corner of `out`: work on a dense copy of it and write it back afterwards.
  Tensor region = same_rank ? narrow_to_index(out, dim, index) : out;
  Tensor work = contiguous(region);
  Tensor source_part = contiguous(same_rank ? narrow_to_index(source, -1, index) : source);
  Tensor index_device = index_on(index_cpu, self.device());
  Around shape = split_around(index.sizes(), dim);
  IndexPlan plan;
  plan.device = self.device().index();
  plan.outer = shape.outer;
  plan.self_size = self_size;
  plan.index_count = shape.size;
  plan.inner = shape.inner;
  plan.source = source_part.data_ptr();
  plan.output = work.data_ptr();
  plan.index = static_cast<const std::int64_t*>(index_device.data_ptr());
  plan.dtype = self.dtype();
  scatter_add_kernel(self.device(), plan);
  if (!work.is_same(region)) copy_(region, work);
  return out;
}

// ------------------------------------------------------------------ one_hot

Tensor one_hot(const Tensor& self, std::int64_t num_classes) {
  EMBER_CHECK(self.dtype() == DType::Int64, DTypeError,
              "one_hot is only applicable to index tensor of type LongTensor.");
  Shape out_sizes = self.sizes();
  if (self.numel() == 0) {
    EMBER_CHECK(num_classes > 0, ValueError, "Can not infer total number of classes from empty tensor.");
    out_sizes.push_back(num_classes);
    return empty(out_sizes, self.options());
  }
  Tensor classes = index_as_int64(self);
  const auto* values = classes.data_ptr<std::int64_t>();
  auto [low, high] = std::minmax_element(values, values + classes.numel());
  EMBER_CHECK(*low >= 0, ValueError, "Class values must be non-negative.");
  if (num_classes == -1) num_classes = *high + 1;  // infer: the largest class + 1
  EMBER_CHECK(*high < num_classes, ValueError, "Class values must be smaller than num_classes.");

  // Written by the backend of self's device: every output element once (a row of zeros
  // and its one), from the index as int64 on that device. Only the range check above
  // needed the values on the host.
  out_sizes.push_back(num_classes);
  Tensor out = empty(out_sizes, TensorOptions().dtype(DType::Int64).device(self.device()));
  Tensor index = contiguous(self);
  OneHotPlan plan;
  plan.index = index.data_ptr<std::int64_t>();
  plan.out = out.data_ptr<std::int64_t>();
  plan.rows = index.numel();
  plan.classes = num_classes;
  plan.device = self.device().index();
  one_hot_kernel(self.device(), plan);
  return out;
}

}  // namespace ember::native
