// core/tensor.h — the Tensor: a view (sizes, strides, offset, dtype) onto a shared Storage.
//
// Tutorial §2. A Tensor is a cheap handle (a shared pointer to a TensorImpl): copying a
// Tensor copies the handle, never the data, exactly as assigning a Python variable does.
// Views (`view`, `transpose`, `slice`, ...) make a new TensorImpl that shares the Storage.
//
// Who defines what:
//   - metadata, data access and autograd *fields* (requires_grad, grad, grad_fn) are core's
//     and defined in core/tensor.cpp;
//   - every op method (views, math, reductions, ...) is differentiable, so it is defined in
//     autograd/ (autograd/tensor_methods.cpp), which records the op on the tape and then
//     calls the non-differentiable kernel-level function of the same name in ember::native
//     (core/native.h). Code inside core itself only ever calls ember::native.
// This mirrors PyTorch, where TensorBody.h declares methods and the autograd layer
// (VariableType) wraps the ATen kernels.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include <ember/core/device.h>
#include <ember/core/dtype.h>
#include <ember/core/error.h>
#include <ember/core/op_list.h>
#include <ember/core/scalar.h>
#include <ember/core/shape.h>
#include <ember/core/storage.h>

namespace ember {

class Tensor;
struct AutogradMeta;  // core/autograd_meta.h
class GradFn;         // core/autograd_meta.h: the base of autograd's graph nodes

// The state behind a Tensor handle.
struct TensorImpl {
  // User-provided, so that make_tensor's make_pooled<TensorImpl>() (a value-initialisation)
  // runs only the member initialisers below: a defaulted constructor would first zero all
  // 192 bytes, DimVector's unused inline slots included (a `rep stos`: 1.4 % of the toy step).
  TensorImpl() noexcept {}  // NOLINT(modernize-use-equals-default): see above
  Storage storage;
  Shape sizes;
  Shape strides;  // in elements, not bytes
  std::int64_t storage_offset = 0;
  DType dtype = DType::Float32;
  // A 0-d tensor made from a C++ number (x * 2.0). It ranks below every dimensioned tensor
  // and 0-d tensor in type promotion, like a Python scalar in PyTorch.
  bool is_wrapped_number = false;
  std::shared_ptr<AutogradMeta> autograd_meta;  // null until autograd needs it
};

// How to build a tensor: dtype (default: float32 for floating data), device, requires_grad.
// libtorch style: ember::zeros({2, 3}, ember::TensorOptions().dtype(ember::kInt64)).
class TensorOptions {
 public:
  TensorOptions() = default;
  TensorOptions(DType dtype) : dtype_(dtype) {}        // NOLINT: zeros({2}, kInt64)
  TensorOptions(Device device) : device_(device) {}     // NOLINT: zeros({2}, Device("cuda"))
  TensorOptions(DeviceType type) : device_(type) {}     // NOLINT

  TensorOptions dtype(DType dtype) const { auto copy = *this; copy.dtype_ = dtype; return copy; }
  TensorOptions device(Device device) const { auto copy = *this; copy.device_ = device; return copy; }
  TensorOptions requires_grad(bool value) const { auto copy = *this; copy.requires_grad_ = value; return copy; }

  std::optional<DType> dtype_opt() const { return dtype_; }
  DType dtype_or(DType fallback) const { return dtype_.value_or(fallback); }
  // The device, CPU when none was named; device_opt() says whether one was: the *_like
  // factories keep the other tensor's device unless the options name one (as PyTorch).
  Device device() const { return device_.value_or(kCPU); }
  std::optional<Device> device_opt() const { return device_; }
  bool requires_grad() const { return requires_grad_; }

 private:
  std::optional<DType> dtype_;
  std::optional<Device> device_;
  bool requires_grad_ = false;
};

inline TensorOptions dtype(DType value) { return TensorOptions().dtype(value); }
inline TensorOptions device(Device value) { return TensorOptions().device(value); }
inline TensorOptions requires_grad(bool value = true) { return TensorOptions().requires_grad(value); }

// Hook signatures (autograd/hooks.h explains them).
using TensorHook = std::function<Tensor(const Tensor& grad)>;  // may return an undefined tensor: keep grad
using PostAccumulateGradHook = std::function<void(const Tensor& leaf)>;

class Tensor {
 public:
  Tensor() = default;  // an undefined tensor (defined() == false), like at::Tensor()
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // ---------------------------------------------------------------- metadata (core)
  bool defined() const { return impl_ != nullptr; }
  std::int64_t dim() const { return static_cast<std::int64_t>(impl().sizes.size()); }
  std::int64_t ndimension() const { return dim(); }
  const Shape& sizes() const { return impl().sizes; }
  const Shape& shape() const { return impl().sizes; }
  const Shape& strides() const { return impl().strides; }
  // Negative dims count from the end. Inline with the checks' throws out of line: every op
  // asks for sizes, and a call per question showed in the small-step profiles.
  std::int64_t size(std::int64_t dim) const { return entry_at_dim(impl().sizes, dim); }
  std::int64_t stride(std::int64_t dim) const { return entry_at_dim(impl().strides, dim); }
  // A plain product: make_tensor, where every tensor is born, already checked that it fits.
  std::int64_t numel() const {
    std::uint64_t product = 1;
    for (std::int64_t size : impl().sizes) product *= static_cast<std::uint64_t>(size);
    return static_cast<std::int64_t>(product);
  }
  std::int64_t storage_offset() const { return impl().storage_offset; }
  DType dtype() const { return impl().dtype; }
  DType scalar_type() const { return impl().dtype; }
  Device device() const { return impl().storage->device(); }
  bool is_cuda() const { return device().is_cuda(); }
  bool is_cpu() const { return device().is_cpu(); }
  bool is_floating_point() const { return ember::is_floating_point(dtype()); }
  std::size_t element_size() const { return itemsize(dtype()); }
  bool is_contiguous() const { return is_contiguous_layout(impl().sizes, impl().strides); }
  bool is_wrapped_number() const { return impl().is_wrapped_number; }
  TensorOptions options() const { return TensorOptions().dtype(dtype()).device(device()); }
  const Storage& storage() const { return impl().storage; }
  TensorImpl& impl() const {  // throws on an undefined tensor
    if (impl_ == nullptr) [[unlikely]] throw_undefined();
    return *impl_;
  }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }
  bool is_same(const Tensor& other) const { return impl_ == other.impl_; }
  long use_count() const { return impl_.use_count(); }

  // Pointer to the first element. data_ptr<T>() checks T against dtype():
  // "expected scalar type Long but found Float". CPU tensors only for typed access.
  void* data_ptr() const;
  template <class T>
  T* data_ptr() const {
    check_dtype_for_access(dtype_of_v<T>);
    return static_cast<T*>(data_ptr());
  }
  // The single value of a one-element tensor (copied to the CPU if needed):
  // "a Tensor with 2 elements cannot be converted to Scalar".
  Scalar item() const;
  template <class T>
  T item() const { return item().to<T>(); }

  // Version counter, shared by all views of the same storage (core/storage.h).
  std::uint64_t version() const { return impl().storage->version(); }
  void bump_version() const { impl().storage->bump_version(); }

  // ---------------------------------------------------------------- autograd fields (core)
  bool requires_grad() const;
  // Sets requires_grad on a leaf. PyTorch's errors: only floating tensors can require grad;
  // a non-leaf can only be switched on this way by its graph.
  Tensor& requires_grad_(bool value = true);
  Tensor& set_requires_grad(bool value) { return requires_grad_(value); }
  const Tensor& grad() const;   // undefined tensor when no gradient has been accumulated
  Tensor& mutable_grad();       // for optimizers and the engine
  bool is_leaf() const;         // no grad_fn
  std::shared_ptr<GradFn> grad_fn() const;
  std::uint32_t output_nr() const;
  bool retains_grad() const;
  AutogradMeta* autograd_meta() const { return impl().autograd_meta.get(); }
  AutogradMeta& ensure_autograd_meta() const;
  // A Python-style name for the graph inspector (set by the user, optional).
  void set_name(const std::string& name) const;
  std::string name() const;

  // ---------------------------------------------------------------- autograd (autograd/)
  void backward(const Tensor& gradient = {}, bool retain_graph = false, bool create_graph = false) const;
  void retain_grad() const;
  Tensor detach() const;
  Tensor& detach_();
  // Runs during backward with the gradient w.r.t. this tensor; may return a replacement.
  void register_hook(TensorHook hook) const;
  // Runs after a leaf's .grad has been accumulated (used by DDP to overlap communication).
  void register_post_accumulate_grad_hook(PostAccumulateGradHook hook) const;

  // ---------------------------------------------------------------- views (autograd/)
  Tensor view(IntArrayRef sizes) const;
  Tensor reshape(IntArrayRef sizes) const;
  template <class... I, std::enable_if_t<(std::is_integral_v<I> && ...), int> = 0>
  Tensor view(I... sizes) const { return view(IntArrayRef({static_cast<std::int64_t>(sizes)...})); }
  template <class... I, std::enable_if_t<(std::is_integral_v<I> && ...), int> = 0>
  Tensor reshape(I... sizes) const { return reshape(IntArrayRef({static_cast<std::int64_t>(sizes)...})); }
  Tensor view_as(const Tensor& other) const { return view(other.sizes()); }
  Tensor reshape_as(const Tensor& other) const { return reshape(other.sizes()); }
  Tensor transpose(std::int64_t dim0, std::int64_t dim1) const;
  Tensor t() const;  // 2-D (or fewer) transpose
  Tensor T() const;  // reverses all dims (tutorial's tensor2d.T)
  Tensor permute(IntArrayRef dims) const;
  Tensor squeeze() const;
  Tensor squeeze(std::int64_t dim) const;
  Tensor unsqueeze(std::int64_t dim) const;
  Tensor flatten(std::int64_t start_dim = 0, std::int64_t end_dim = -1) const;
  Tensor expand(IntArrayRef sizes) const;
  Tensor expand_as(const Tensor& other) const { return expand(other.sizes()); }
  Tensor select(std::int64_t dim, std::int64_t index) const;
  Tensor narrow(std::int64_t dim, std::int64_t start, std::int64_t length) const;
  Tensor slice(std::int64_t dim, std::optional<std::int64_t> start = std::nullopt,
               std::optional<std::int64_t> end = std::nullopt, std::int64_t step = 1) const;
  // x[i]: select(0, i), a view. Negative i counts from the end; PyTorch's indexing errors
  // ("index 5 is out of bounds for dimension 0 with size 3", "invalid index of a 0-dim tensor...").
  Tensor operator[](std::int64_t index) const;
  Tensor contiguous() const;
  Tensor clone() const;
  Tensor to(DType dtype) const;
  // non_blocking (PyTorch's name): a host->device copy from pinned memory is queued on the
  // GPU and returns at once (core/pinned_memory.cpp); otherwise the flag changes nothing.
  Tensor to(Device device, bool non_blocking = false) const;
  Tensor to(Device device, DType dtype, bool non_blocking = false) const;
  Tensor to(const char* device, bool non_blocking = false) const { return to(Device(device), non_blocking); }
  Tensor cpu() const { return to(kCPU); }
  Tensor cuda(bool non_blocking = false) const { return to(Device(DeviceType::CUDA), non_blocking); }  // current GPU
  // A copy in page-locked (pinned) host memory, which the GPU reads by DMA at full speed and
  // asynchronously; self when already pinned. Needs a GPU (autograd/pin_memory_op.cpp).
  Tensor pin_memory() const;
  bool is_pinned() const;  // a CPU tensor whose memory is pinned (core/pinned_memory.cpp)

  // ---------------------------------------------------------------- in place (autograd/)
  Tensor& add_(const Tensor& other, Scalar alpha = 1);
  Tensor& add_(Scalar other);
  Tensor& sub_(const Tensor& other, Scalar alpha = 1);
  Tensor& sub_(Scalar other);
  Tensor& mul_(const Tensor& other);
  Tensor& mul_(Scalar other);
  Tensor& div_(const Tensor& other);
  Tensor& div_(Scalar other);
  Tensor& copy_(const Tensor& source);
  Tensor& fill_(Scalar value);
  Tensor& zero_();

  // ---------------------------------------------------------------- math (autograd/)
  Tensor add(const Tensor& other, Scalar alpha = 1) const;
  Tensor sub(const Tensor& other, Scalar alpha = 1) const;
  // With a number (x.add(2), x.mul(0.5)): the number promotes like a Python scalar, so an
  // int64 tensor times 2.5 is float32 and a float32 tensor plus 2 stays float32.
  Tensor add(Scalar other, Scalar alpha = 1) const;
  Tensor sub(Scalar other, Scalar alpha = 1) const;
  Tensor mul(Scalar other) const;
  Tensor div(Scalar other) const;
  // x.exp(), x.mul(y), x.eq(y), ...: the rows of core/op_list.h marked Method, and every
  // binary row.
#define EMBER_UNARY_METHOD_Method(name) Tensor name() const;
#define EMBER_UNARY_METHOD_FunctionOnly(name)
#define EMBER_DECLARE_UNARY_METHOD(name, Functor, inputs, method, ...) EMBER_UNARY_METHOD_##method(name)
#define EMBER_DECLARE_BINARY_METHOD(name, ...) Tensor name(const Tensor& other) const;
  EMBER_UNARY_OPS(EMBER_DECLARE_UNARY_METHOD)
  EMBER_BINARY_OPS(EMBER_DECLARE_BINARY_METHOD)
#undef EMBER_DECLARE_BINARY_METHOD
#undef EMBER_DECLARE_UNARY_METHOD
#undef EMBER_UNARY_METHOD_FunctionOnly
#undef EMBER_UNARY_METHOD_Method
  Tensor pow(Scalar exponent) const;
  Tensor clamp(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt) const;
  Tensor clamp(const std::optional<Tensor>& min, const std::optional<Tensor>& max) const;
  Tensor masked_fill(const Tensor& mask, Scalar value) const;
  Tensor masked_fill(const Tensor& mask, const Tensor& value) const;
  // With a number, which promotes like a Python scalar (x == 2, x.lt(0.5)).
  Tensor eq(Scalar other) const;
  Tensor ne(Scalar other) const;
  Tensor lt(Scalar other) const;
  Tensor le(Scalar other) const;
  Tensor gt(Scalar other) const;
  Tensor ge(Scalar other) const;

  // ---------------------------------------------------------------- reductions (autograd/)
  // dims empty = all dims. dtype: accumulate/return type (sum of ints is int64, as PyTorch).
  Tensor sum(std::optional<DType> dtype = std::nullopt) const;
  Tensor sum(IntArrayRef dims, bool keepdim = false, std::optional<DType> dtype = std::nullopt) const;
  Tensor mean(std::optional<DType> dtype = std::nullopt) const;
  Tensor mean(IntArrayRef dims, bool keepdim = false, std::optional<DType> dtype = std::nullopt) const;
  Tensor prod(std::optional<DType> dtype = std::nullopt) const;
  Tensor prod(std::int64_t dim, bool keepdim = false, std::optional<DType> dtype = std::nullopt) const;
  Tensor max() const;  // all elements
  Tensor min() const;
  std::tuple<Tensor, Tensor> max(std::int64_t dim, bool keepdim = false) const;  // (values, indices)
  std::tuple<Tensor, Tensor> min(std::int64_t dim, bool keepdim = false) const;
  Tensor amax(IntArrayRef dims, bool keepdim = false) const;
  Tensor amin(IntArrayRef dims, bool keepdim = false) const;
  Tensor argmax(std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor argmin(std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor softmax(std::int64_t dim) const;
  Tensor log_softmax(std::int64_t dim) const;
  std::tuple<Tensor, Tensor> topk(std::int64_t k, std::int64_t dim = -1, bool largest = true, bool sorted = true) const;

  // ---------------------------------------------------------------- linear algebra, indexing
  Tensor matmul(const Tensor& other) const;
  Tensor mm(const Tensor& other) const;
  Tensor index_select(std::int64_t dim, const Tensor& index) const;
  Tensor gather(std::int64_t dim, const Tensor& index) const;

  // ---------------------------------------------------------------- comparisons (core, no grad)
  bool allclose(const Tensor& other, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false) const;
  bool equal(const Tensor& other) const;

 private:
  void check_dtype_for_access(DType requested) const;
  [[noreturn]] static void throw_undefined();
  [[noreturn]] static void throw_no_dimensions(std::int64_t dim);
  // size(dim) and stride(dim): the entry of `values` (sizes or strides) at a wrapped dim.
  static std::int64_t entry_at_dim(const Shape& values, std::int64_t dim) {
    if (values.empty()) [[unlikely]] throw_no_dimensions(dim);
    return values[static_cast<std::size_t>(wrap_dim(dim, static_cast<std::int64_t>(values.size())))];
  }
  std::shared_ptr<TensorImpl> impl_;
};

// ---------------------------------------------------------------- operators (autograd/)
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, Scalar b);
Tensor operator-(const Tensor& a, Scalar b);
Tensor operator*(const Tensor& a, Scalar b);
Tensor operator/(const Tensor& a, Scalar b);
Tensor operator+(Scalar a, const Tensor& b);
Tensor operator-(Scalar a, const Tensor& b);
Tensor operator*(Scalar a, const Tensor& b);
Tensor operator/(Scalar a, const Tensor& b);
Tensor operator-(const Tensor& a);
Tensor operator==(const Tensor& a, const Tensor& b);
Tensor operator!=(const Tensor& a, const Tensor& b);
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator<=(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator>=(const Tensor& a, const Tensor& b);
Tensor operator==(const Tensor& a, Scalar b);
Tensor operator!=(const Tensor& a, Scalar b);
Tensor operator<(const Tensor& a, Scalar b);
Tensor operator<=(const Tensor& a, Scalar b);
Tensor operator>(const Tensor& a, Scalar b);
Tensor operator>=(const Tensor& a, Scalar b);
Tensor& operator+=(Tensor& a, const Tensor& b);
Tensor& operator-=(Tensor& a, const Tensor& b);
Tensor& operator*=(Tensor& a, const Tensor& b);
Tensor& operator/=(Tensor& a, const Tensor& b);
Tensor& operator+=(Tensor& a, Scalar b);
Tensor& operator-=(Tensor& a, Scalar b);
Tensor& operator*=(Tensor& a, Scalar b);
Tensor& operator/=(Tensor& a, Scalar b);

// Builds a fresh TensorImpl (used by native code; users call the factories).
Tensor make_tensor(Storage storage, Shape sizes, Shape strides, std::int64_t storage_offset, DType dtype);
// An uninitialised contiguous tensor.
Tensor empty(IntArrayRef sizes, TensorOptions options = {});
// A 0-d "wrapped number" tensor holding a C++ scalar on `device` (for x + 2.0).
Tensor scalar_to_tensor(Scalar value, Device device = kCPU);

}  // namespace ember
