// core/tensor.cpp — the parts of Tensor that core owns: metadata, data access, autograd fields.
#include <ember/core/tensor.h>

#include <ember/core/autograd_meta.h>
#include <ember/core/native.h>
#include <ember/core/small_object_pool.h>

namespace ember {

void Tensor::throw_undefined() { throw ValueError("Tensor is undefined (default-constructed)"); }

void Tensor::throw_no_dimensions(std::int64_t dim) {
  throw IndexError(make_message("dimension specified as ", dim, " but tensor has no dimensions"));
}

void* Tensor::data_ptr() const {
  auto* base = static_cast<char*>(impl().storage->data());
  if (base == nullptr) return nullptr;
  return base + impl().storage_offset * static_cast<std::int64_t>(element_size());
}

void Tensor::check_dtype_for_access(DType requested) const {
  EMBER_CHECK(requested == dtype(), DTypeError, "expected scalar type ", scalar_type_name(requested),
              " but found ", scalar_type_name(dtype()));
}

Scalar Tensor::item() const {
  EMBER_CHECK(numel() == 1, ValueError, "a Tensor with ", numel(), " elements cannot be converted to Scalar");
  Tensor host = is_cpu() ? *this : native::to_device(*this, kCPU);
  Scalar result;
  EMBER_DISPATCH_ALL_AND_REDUCED(host.dtype(), result = Scalar(*static_cast<const scalar_t*>(host.data_ptr())));
  return result;
}

// ------------------------------------------------------------------ autograd fields

bool Tensor::requires_grad() const {
  const AutogradMeta* meta = autograd_meta();
  if (meta == nullptr) return false;
  // A view requires grad when its base does (PyTorch), also when the base started to after
  // the view was made (an in-place op wrote a tensor that requires grad into it).
  return meta->requires_grad || (meta->view_base.defined() && meta->view_base.requires_grad());
}

AutogradMeta& Tensor::ensure_autograd_meta() const {
  if (!impl().autograd_meta) impl().autograd_meta = detail::make_pooled<AutogradMeta>();
  return *impl().autograd_meta;
}

Tensor& Tensor::requires_grad_(bool value) {
  if (value) {
    EMBER_CHECK(is_floating_point(), AutogradError,
                "only Tensors of floating point dtype can require gradients");
  }
  if (!is_leaf()) {
    EMBER_CHECK(value, AutogradError,
                "you can only change requires_grad flags of leaf variables. If you want to use a computed "
                "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().");
    return *this;
  }
  if (value || autograd_meta() != nullptr) ensure_autograd_meta().requires_grad = value;
  return *this;
}

const Tensor& Tensor::grad() const {
  static const Tensor undefined;
  const AutogradMeta* meta = autograd_meta();
  return meta != nullptr ? meta->grad : undefined;
}

Tensor& Tensor::mutable_grad() { return ensure_autograd_meta().grad; }

bool Tensor::is_leaf() const { return grad_fn() == nullptr; }

std::shared_ptr<GradFn> Tensor::grad_fn() const {
  const AutogradMeta* meta = autograd_meta();
  if (meta == nullptr) return nullptr;
  // A view whose memory was written in place since its grad_fn was set gets a fresh one
  // that replays the view on its base's current history (autograd/view_tracking.h).
  if (meta->view_base.defined() && meta->view_version != version()) {
    if (RefreshViewGradFn refresh = refresh_view_grad_fn.load(std::memory_order_acquire)) refresh(*this);
  }
  return meta->grad_fn;
}

std::uint32_t Tensor::output_nr() const {
  const AutogradMeta* meta = autograd_meta();
  return meta != nullptr ? meta->output_nr : 0;
}

bool Tensor::retains_grad() const {
  const AutogradMeta* meta = autograd_meta();
  return meta != nullptr && meta->retains_grad;
}

void Tensor::set_name(const std::string& name) const { ensure_autograd_meta().name = name; }
std::string Tensor::name() const {
  const AutogradMeta* meta = autograd_meta();
  return meta != nullptr ? meta->name : std::string();
}

bool Tensor::allclose(const Tensor& other, double rtol, double atol, bool equal_nan) const {
  return native::allclose(*this, other, rtol, atol, equal_nan);
}
bool Tensor::equal(const Tensor& other) const { return native::equal(*this, other); }

// ------------------------------------------------------------------ construction

Tensor make_tensor(Storage storage, Shape sizes, Shape strides, std::int64_t storage_offset, DType dtype) {
  // Every tensor is born here (empty, views, from_blob): the one place that guarantees
  // the size invariant (core/shape.h) that the rest of the code relies on.
  check_sizes_fit(sizes);
  auto impl = detail::make_pooled<TensorImpl>();
  impl->storage = std::move(storage);
  impl->sizes = std::move(sizes);
  impl->strides = std::move(strides);
  impl->storage_offset = storage_offset;
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

Tensor empty(IntArrayRef sizes, TensorOptions options) {
  check_no_negative_sizes(sizes);
  DType dtype = options.dtype_or(default_float_dtype());
  // Sizes and byte count are checked before the allocator sees them: an overflowing
  // product would otherwise ask for a few bytes and let the tensor read far past them.
  const std::int64_t nbytes = compute_storage_nbytes(sizes, itemsize(dtype));
  Shape strides = contiguous_strides(sizes);
  Tensor result = make_tensor(make_storage(static_cast<std::size_t>(nbytes), options.device()), to_shape(sizes),
                              std::move(strides), 0, dtype);
  if (options.requires_grad()) result.requires_grad_(true);
  return result;
}

Tensor scalar_to_tensor(Scalar value, Device device) {
  DType dtype = value.is_floating_point() ? DType::Float64 : value.is_bool() ? DType::Bool : DType::Int64;
  Tensor result = empty({}, TensorOptions().dtype(dtype));
  EMBER_DISPATCH_ALL(dtype, *result.data_ptr<scalar_t>() = value.to<scalar_t>());
  if (!device.is_cpu()) result = native::to_device(result, device);
  result.impl().is_wrapped_number = true;
  return result;
}

}  // namespace ember
