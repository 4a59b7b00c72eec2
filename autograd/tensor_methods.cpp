// autograd/tensor_methods.cpp — the Tensor methods and operators that core/tensor.h marks
// "(autograd/)": each forwards to the differentiable free function of the same name
// (autograd/ops.h), so a method call and a free-function call record the same graph node.
// Also the number overloads of add/sub/mul/div (ember::add(x, 2)), which wrap the number
// into a 0-d tensor and call the tensor op.
//
// Tutorial §2–§4: `x.sum()`, `a @ b` (here a.matmul(b)), `w1 * x1 + b`.
// The in-place methods (add_, mul_, ...) live in inplace_ops.cpp; backward(), detach(),
// hooks in tensor_autograd.cpp.
#include <ember/autograd/ops.h>
#include <ember/core/native.h>

namespace ember {

// ---------------------------------------------------------------- views
Tensor Tensor::view(IntArrayRef sizes) const { return ember::view(*this, sizes); }
Tensor Tensor::reshape(IntArrayRef sizes) const { return ember::reshape(*this, sizes); }
Tensor Tensor::transpose(std::int64_t dim0, std::int64_t dim1) const { return ember::transpose(*this, dim0, dim1); }
Tensor Tensor::t() const { return ember::t(*this); }
Tensor Tensor::T() const {
  // .T reverses every dim: a permute with the dims backwards (so it differentiates as one).
  std::vector<std::int64_t> dims(static_cast<std::size_t>(dim()));
  for (std::int64_t d = 0; d < dim(); ++d) dims[static_cast<std::size_t>(d)] = dim() - 1 - d;
  return ember::permute(*this, dims);
}
Tensor Tensor::permute(IntArrayRef dims) const { return ember::permute(*this, dims); }
Tensor Tensor::squeeze() const { return ember::squeeze(*this); }
Tensor Tensor::squeeze(std::int64_t dim) const { return ember::squeeze(*this, dim); }
Tensor Tensor::unsqueeze(std::int64_t dim) const { return ember::unsqueeze(*this, dim); }
Tensor Tensor::flatten(std::int64_t start_dim, std::int64_t end_dim) const {
  return ember::flatten(*this, start_dim, end_dim);
}
Tensor Tensor::expand(IntArrayRef sizes) const { return ember::expand(*this, sizes); }
Tensor Tensor::select(std::int64_t dim, std::int64_t index) const { return ember::select(*this, dim, index); }
Tensor Tensor::narrow(std::int64_t dim, std::int64_t start, std::int64_t length) const {
  return ember::narrow(*this, dim, start, length);
}
Tensor Tensor::slice(std::int64_t dim, std::optional<std::int64_t> start, std::optional<std::int64_t> end,
                     std::int64_t step) const {
  return ember::slice(*this, dim, start, end, step);
}
Tensor Tensor::operator[](std::int64_t index) const {
  // Python indexing, not select(): its own message for a 0-d tensor (the out-of-range
  // message is the same as select's, "index 5 is out of bounds for dimension 0 with size 3").
  EMBER_CHECK(dim() > 0, IndexError,
              "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ to "
              "convert a 0-dim tensor to a number");
  return ember::select(*this, 0, index);
}
Tensor Tensor::contiguous() const { return ember::contiguous(*this); }
Tensor Tensor::clone() const { return ember::clone(*this); }
Tensor Tensor::to(DType dtype) const { return ember::to(*this, dtype); }
Tensor Tensor::to(Device device, bool non_blocking) const { return ember::to(*this, device, non_blocking); }
Tensor Tensor::to(Device device, DType dtype, bool non_blocking) const {
  return ember::to(ember::to(*this, device, non_blocking), dtype);
}

// A C++ number becomes a 0-d "wrapped number" tensor on the tensor's device, so it does not
// widen the tensor's dtype (float32 * 2.0 stays float32), exactly as a Python scalar.
static Tensor wrap(Scalar value, const Tensor& like) { return scalar_to_tensor(value, like.device()); }

// ---------------------------------------------------------------- math with numbers
Tensor add(const Tensor& a, Scalar b, Scalar alpha) { return ember::add(a, wrap(b, a), alpha); }
Tensor add(Scalar a, const Tensor& b, Scalar alpha) { return ember::add(wrap(a, b), b, alpha); }
Tensor sub(const Tensor& a, Scalar b, Scalar alpha) { return ember::sub(a, wrap(b, a), alpha); }
Tensor sub(Scalar a, const Tensor& b, Scalar alpha) { return ember::sub(wrap(a, b), b, alpha); }
Tensor mul(const Tensor& a, Scalar b) { return ember::mul(a, wrap(b, a)); }
Tensor mul(Scalar a, const Tensor& b) { return ember::mul(wrap(a, b), b); }
Tensor div(const Tensor& a, Scalar b) { return ember::div(a, wrap(b, a)); }
Tensor div(Scalar a, const Tensor& b) { return ember::div(wrap(a, b), b); }

// ---------------------------------------------------------------- math
Tensor Tensor::add(const Tensor& other, Scalar alpha) const { return ember::add(*this, other, alpha); }
Tensor Tensor::sub(const Tensor& other, Scalar alpha) const { return ember::sub(*this, other, alpha); }
Tensor Tensor::add(Scalar other, Scalar alpha) const { return ember::add(*this, other, alpha); }
Tensor Tensor::sub(Scalar other, Scalar alpha) const { return ember::sub(*this, other, alpha); }
Tensor Tensor::mul(Scalar other) const { return ember::mul(*this, other); }
Tensor Tensor::div(Scalar other) const { return ember::div(*this, other); }
// The methods of core/op_list.h's rows.
#define EMBER_UNARY_METHOD_Method(name) \
  Tensor Tensor::name() const { return ember::name(*this); }
#define EMBER_UNARY_METHOD_FunctionOnly(name)
#define EMBER_DEFINE_UNARY_METHOD(name, Functor, inputs, method, ...) EMBER_UNARY_METHOD_##method(name)
#define EMBER_DEFINE_BINARY_METHOD(name, ...) \
  Tensor Tensor::name(const Tensor& other) const { return ember::name(*this, other); }
EMBER_UNARY_OPS(EMBER_DEFINE_UNARY_METHOD)
EMBER_BINARY_OPS(EMBER_DEFINE_BINARY_METHOD)
#undef EMBER_DEFINE_BINARY_METHOD
#undef EMBER_DEFINE_UNARY_METHOD
#undef EMBER_UNARY_METHOD_FunctionOnly
#undef EMBER_UNARY_METHOD_Method
Tensor Tensor::pow(Scalar exponent) const { return ember::pow(*this, exponent); }
Tensor Tensor::clamp(std::optional<Scalar> min, std::optional<Scalar> max) const { return ember::clamp(*this, min, max); }
Tensor Tensor::clamp(const std::optional<Tensor>& min, const std::optional<Tensor>& max) const {
  return ember::clamp(*this, min, max);
}
Tensor Tensor::masked_fill(const Tensor& mask, Scalar value) const { return ember::masked_fill(*this, mask, value); }
Tensor Tensor::masked_fill(const Tensor& mask, const Tensor& value) const {
  return ember::masked_fill(*this, mask, value);
}

Tensor Tensor::eq(Scalar other) const { return ember::eq(*this, wrap(other, *this)); }
Tensor Tensor::ne(Scalar other) const { return ember::ne(*this, wrap(other, *this)); }
Tensor Tensor::lt(Scalar other) const { return ember::lt(*this, wrap(other, *this)); }
Tensor Tensor::le(Scalar other) const { return ember::le(*this, wrap(other, *this)); }
Tensor Tensor::gt(Scalar other) const { return ember::gt(*this, wrap(other, *this)); }
Tensor Tensor::ge(Scalar other) const { return ember::ge(*this, wrap(other, *this)); }

// ---------------------------------------------------------------- reductions
Tensor Tensor::sum(std::optional<DType> dtype) const { return ember::sum(*this, {}, false, dtype); }
Tensor Tensor::sum(IntArrayRef dims, bool keepdim, std::optional<DType> dtype) const {
  return ember::sum(*this, dims, keepdim, dtype);
}
Tensor Tensor::mean(std::optional<DType> dtype) const { return ember::mean(*this, {}, false, dtype); }
Tensor Tensor::mean(IntArrayRef dims, bool keepdim, std::optional<DType> dtype) const {
  return ember::mean(*this, dims, keepdim, dtype);
}
Tensor Tensor::prod(std::optional<DType> dtype) const { return ember::prod(*this, {}, false, dtype); }
Tensor Tensor::prod(std::int64_t dim, bool keepdim, std::optional<DType> dtype) const {
  return ember::prod(*this, {dim}, keepdim, dtype);
}
Tensor Tensor::max() const { return ember::max(*this); }
Tensor Tensor::min() const { return ember::min(*this); }
std::tuple<Tensor, Tensor> Tensor::max(std::int64_t dim, bool keepdim) const { return ember::max(*this, dim, keepdim); }
std::tuple<Tensor, Tensor> Tensor::min(std::int64_t dim, bool keepdim) const { return ember::min(*this, dim, keepdim); }
Tensor Tensor::amax(IntArrayRef dims, bool keepdim) const { return ember::amax(*this, dims, keepdim); }
Tensor Tensor::amin(IntArrayRef dims, bool keepdim) const { return ember::amin(*this, dims, keepdim); }
Tensor Tensor::argmax(std::optional<std::int64_t> dim, bool keepdim) const { return ember::argmax(*this, dim, keepdim); }
Tensor Tensor::argmin(std::optional<std::int64_t> dim, bool keepdim) const { return ember::argmin(*this, dim, keepdim); }
Tensor Tensor::softmax(std::int64_t dim) const { return ember::softmax(*this, dim); }
Tensor Tensor::log_softmax(std::int64_t dim) const { return ember::log_softmax(*this, dim); }
std::tuple<Tensor, Tensor> Tensor::topk(std::int64_t k, std::int64_t dim, bool largest, bool sorted) const {
  return ember::topk(*this, k, dim, largest, sorted);
}

// ---------------------------------------------------------------- linear algebra, indexing
Tensor Tensor::matmul(const Tensor& other) const { return ember::matmul(*this, other); }
Tensor Tensor::mm(const Tensor& other) const { return ember::mm(*this, other); }
Tensor Tensor::index_select(std::int64_t dim, const Tensor& index) const {
  return ember::index_select(*this, dim, index);
}
Tensor Tensor::gather(std::int64_t dim, const Tensor& index) const { return ember::gather(*this, dim, index); }

// ---------------------------------------------------------------- operators
Tensor operator+(const Tensor& a, const Tensor& b) { return ember::add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return ember::sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return ember::mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return ember::div(a, b); }
Tensor operator+(const Tensor& a, Scalar b) { return ember::add(a, b); }
Tensor operator-(const Tensor& a, Scalar b) { return ember::sub(a, b); }
Tensor operator*(const Tensor& a, Scalar b) { return ember::mul(a, b); }
Tensor operator/(const Tensor& a, Scalar b) { return ember::div(a, b); }
// number + x and number * x are x.add(number) and x.mul(number), as libtorch writes them: the
// number is the second operand, which a 16-bit multiplication reads unrounded
// (core/elementwise.cpp, scales_by_unrounded_number).
Tensor operator+(Scalar a, const Tensor& b) { return ember::add(b, a); }
Tensor operator-(Scalar a, const Tensor& b) { return ember::sub(a, b); }
Tensor operator*(Scalar a, const Tensor& b) { return ember::mul(b, a); }
Tensor operator/(Scalar a, const Tensor& b) { return ember::div(a, b); }
Tensor operator-(const Tensor& a) { return ember::neg(a); }
Tensor operator==(const Tensor& a, const Tensor& b) { return ember::eq(a, b); }
Tensor operator!=(const Tensor& a, const Tensor& b) { return ember::ne(a, b); }
Tensor operator<(const Tensor& a, const Tensor& b) { return ember::lt(a, b); }
Tensor operator<=(const Tensor& a, const Tensor& b) { return ember::le(a, b); }
Tensor operator>(const Tensor& a, const Tensor& b) { return ember::gt(a, b); }
Tensor operator>=(const Tensor& a, const Tensor& b) { return ember::ge(a, b); }
Tensor operator==(const Tensor& a, Scalar b) { return a.eq(b); }
Tensor operator!=(const Tensor& a, Scalar b) { return a.ne(b); }
Tensor operator<(const Tensor& a, Scalar b) { return a.lt(b); }
Tensor operator<=(const Tensor& a, Scalar b) { return a.le(b); }
Tensor operator>(const Tensor& a, Scalar b) { return a.gt(b); }
Tensor operator>=(const Tensor& a, Scalar b) { return a.ge(b); }
Tensor& operator+=(Tensor& a, const Tensor& b) { return a.add_(b); }
Tensor& operator-=(Tensor& a, const Tensor& b) { return a.sub_(b); }
Tensor& operator*=(Tensor& a, const Tensor& b) { return a.mul_(b); }
Tensor& operator/=(Tensor& a, const Tensor& b) { return a.div_(b); }
Tensor& operator+=(Tensor& a, Scalar b) { return a.add_(b); }
Tensor& operator-=(Tensor& a, Scalar b) { return a.sub_(b); }
Tensor& operator*=(Tensor& a, Scalar b) { return a.mul_(b); }
Tensor& operator/=(Tensor& a, Scalar b) { return a.div_(b); }

}  // namespace ember
