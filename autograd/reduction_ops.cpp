// autograd/reduction_ops.cpp — differentiable reductions and softmax, with their formulas.
//
// Tutorial §4 (a loss is a reduction: mean over the batch). A reduction's backward first
// puts the reduced dims back into the gradient (unsqueeze, unless keepdim) and then
// broadcasts it over the input: every input element that went into an output element
// receives that element's gradient, scaled by the reduction's local derivative.
#include <algorithm>
#include <array>
#include <numeric>

#include <ember/autograd/autocast.h>
#include <ember/autograd/function.h>
#include <ember/autograd/ops.h>
#include <ember/core/factories.h>
#include <ember/core/native.h>
#include <ember/core/profiler.h>

namespace ember {

using autograd::needs_grad;
using autograd::Node;
using autograd::record;
using autograd::TensorList;

namespace {

// The reduced dims, wrapped and sorted; an empty list means every dim (PyTorch's dim=None).
std::vector<std::int64_t> reduced_dims(IntArrayRef dims, std::int64_t ndim) {
  std::vector<std::int64_t> result;
  if (dims.empty()) {
    for (std::int64_t d = 0; d < ndim; ++d) result.push_back(d);
  } else {
    // A 0-d tensor's dim 0 / -1 names no dimension to restore (native:: checked the dims).
    for (std::int64_t d : dims)
      if (ndim > 0) result.push_back(wrap_dim(d, ndim));
  }
  std::sort(result.begin(), result.end());
  return result;
}

// A reduction's output (or gradient) with the reduced dims re-inserted as size 1, so it
// broadcasts against the input.
Tensor restore_dims(const Tensor& reduced, const std::vector<std::int64_t>& dims, bool keepdim) {
  if (keepdim) return reduced;
  Tensor result = reduced;
  for (std::int64_t d : dims) result = ember::unsqueeze(result, d);
  return result;
}

// How many input elements each output element of the reduction gathered.
std::int64_t reduced_count(const Shape& sizes, const std::vector<std::int64_t>& dims) {
  std::int64_t count = 1;
  for (std::int64_t d : dims) count *= sizes[static_cast<std::size_t>(d)];
  return count;
}

// amax/amin (and max()/min() of everything): the gradient is shared evenly by every
// element equal to the extreme value (PyTorch's rule for ties).
Tensor record_extreme(const Tensor& self, Tensor out, IntArrayRef dims, bool keepdim, const char* name) {
  if (!needs_grad(self)) return out;
  std::vector<std::int64_t> wrapped = reduced_dims(dims, self.dim());
  auto node = record(name, {self}, out);
  node->save("self", self);
  node->save_output("result", out);
  node->set_backward([wrapped, keepdim](Node& n, const TensorList& grads) -> TensorList {
    Tensor x = n.saved(0);
    Tensor extreme = restore_dims(n.saved(1), wrapped, keepdim);
    Tensor is_extreme = ember::to(x == extreme, grads[0].dtype());
    Tensor ties = ember::sum(is_extreme, wrapped, /*keepdim=*/true);
    return {restore_dims(grads[0], wrapped, keepdim) * is_extreme / ties};
  });
  return out;
}

// max/min along a dim: the gradient goes to the element whose index was returned.
std::tuple<Tensor, Tensor> record_indexed_extreme(const Tensor& self, std::tuple<Tensor, Tensor> result,
                                                  std::int64_t dim, bool keepdim, const char* name) {
  if (!needs_grad(self)) return result;
  auto& [values, indices] = result;
  std::int64_t d = self.dim() == 0 ? 0 : wrap_dim(dim, self.dim());
  Shape sizes = self.sizes();
  auto node = record(name, {self}, values);
  node->save("indices", indices);
  node->set_backward([d, keepdim, sizes](Node& n, const TensorList& grads) -> TensorList {
    Tensor index = n.saved(0);
    Tensor grad = grads[0];
    if (sizes.empty()) return {grad};  // a 0-d input is its own max
    if (!keepdim) {
      index = ember::unsqueeze(index, d);
      grad = ember::unsqueeze(grad, d);
    }
    return {ember::scatter_add(zeros(sizes, grad.options()), d, index, grad)};
  });
  return result;
}

}  // namespace

Tensor sum(const Tensor& self, IntArrayRef dims, bool keepdim, std::optional<DType> dtype) {
  EMBER_RECORD_FUNCTION("sum", self);
  Tensor out = native::sum(self, dims, keepdim, dtype);
  if (needs_grad(self) && out.is_floating_point()) {
    // d sum / d x_i = 1: the gradient is broadcast back over the summed dims.
    std::vector<std::int64_t> wrapped = reduced_dims(dims, self.dim());
    Shape sizes = self.sizes();
    auto node = record(dims.empty() ? "SumBackward0" : "SumBackward1", {self}, out);
    node->set_backward([wrapped, keepdim, sizes](Node&, const TensorList& grads) -> TensorList {
      return {ember::expand(restore_dims(grads[0], wrapped, keepdim), sizes)};
    });
  }
  return out;
}

Tensor mean(const Tensor& self, IntArrayRef dims, bool keepdim, std::optional<DType> dtype) {
  EMBER_RECORD_FUNCTION("mean", self);
  Tensor out = native::mean(self, dims, keepdim, dtype);
  if (needs_grad(self)) {
    // d mean / d x_i = 1 / (number of elements averaged).
    std::vector<std::int64_t> wrapped = reduced_dims(dims, self.dim());
    Shape sizes = self.sizes();
    double count = static_cast<double>(reduced_count(sizes, wrapped));
    auto node = record(dims.empty() ? "MeanBackward0" : "MeanBackward1", {self}, out);
    node->set_backward([wrapped, keepdim, sizes, count](Node&, const TensorList& grads) -> TensorList {
      return {ember::expand(restore_dims(grads[0], wrapped, keepdim), sizes) / count};
    });
  }
  return out;
}

Tensor prod(const Tensor& self, IntArrayRef dims, bool keepdim, std::optional<DType> dtype) {
  if (autocast::active()) {  // autograd/autocast.h: a float32 op
    const autocast::SuspendGuard cast_once;
    return ember::prod(autocast::to_float32(self), dims, keepdim, dtype);
  }
  EMBER_RECORD_FUNCTION("prod", self);
  Tensor out = native::prod(self, dims, keepdim, dtype);
  if (needs_grad(self) && out.is_floating_point()) {
    // d prod / d x_i = product of the *other* elements. Dividing the product by x_i fails
    // at zeros, so count the zeros of each group:
    //   no zero:    prod / x_i
    //   one zero:   the product of the non-zeros at the zero, 0 elsewhere
    //   two or more: 0 everywhere.
    std::vector<std::int64_t> wrapped = reduced_dims(dims, self.dim());
    auto node = record(dims.empty() ? "ProdBackward0" : "ProdBackward1", {self}, out);
    node->save("self", self);
    node->set_backward([wrapped, keepdim](Node& n, const TensorList& grads) -> TensorList {
      Tensor x = n.saved(0);
      Tensor is_zero = x == 0.0;
      Tensor nonzero = ember::where(is_zero, ones_like(x), x);
      Tensor product_of_nonzero = ember::prod(nonzero, wrapped, /*keepdim=*/true);
      Tensor zero_count = ember::sum(ember::to(is_zero, kInt64), wrapped, /*keepdim=*/true);
      Tensor no_zero = product_of_nonzero / nonzero;
      Tensor one_zero = ember::where(is_zero, product_of_nonzero, zeros_like(no_zero));
      Tensor local = ember::where(zero_count == 0, no_zero, ember::where(zero_count == 1, one_zero, zeros_like(no_zero)));
      return {restore_dims(grads[0], wrapped, keepdim) * local};
    });
  }
  return out;
}

Tensor amax(const Tensor& self, IntArrayRef dims, bool keepdim) {
  EMBER_RECORD_FUNCTION("amax", self);
  return record_extreme(self, native::amax(self, dims, keepdim), dims, keepdim, "AmaxBackward0");
}
Tensor amin(const Tensor& self, IntArrayRef dims, bool keepdim) {
  EMBER_RECORD_FUNCTION("amin", self);
  return record_extreme(self, native::amin(self, dims, keepdim), dims, keepdim, "AminBackward0");
}
Tensor max(const Tensor& self) {
  EMBER_RECORD_FUNCTION("max", self);
  EMBER_CHECK(self.numel() > 0, ValueError,
              "max(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim "
              "with the 'dim' argument.");
  return record_extreme(self, native::amax(self, {}, false), {}, false, "MaxBackward1");
}
Tensor min(const Tensor& self) {
  EMBER_RECORD_FUNCTION("min", self);
  EMBER_CHECK(self.numel() > 0, ValueError,
              "min(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim "
              "with the 'dim' argument.");
  return record_extreme(self, native::amin(self, {}, false), {}, false, "MinBackward1");
}
std::tuple<Tensor, Tensor> max(const Tensor& self, std::int64_t dim, bool keepdim) {
  EMBER_RECORD_FUNCTION("max", self);
  return record_indexed_extreme(self, native::max(self, dim, keepdim), dim, keepdim, "MaxBackward0");
}
std::tuple<Tensor, Tensor> min(const Tensor& self, std::int64_t dim, bool keepdim) {
  EMBER_RECORD_FUNCTION("min", self);
  return record_indexed_extreme(self, native::min(self, dim, keepdim), dim, keepdim, "MinBackward0");
}
Tensor argmax(const Tensor& self, std::optional<std::int64_t> dim, bool keepdim) {
  EMBER_RECORD_FUNCTION("argmax", self);
  return native::argmax(self, dim, keepdim);
}
Tensor argmin(const Tensor& self, std::optional<std::int64_t> dim, bool keepdim) {
  EMBER_RECORD_FUNCTION("argmin", self);
  return native::argmin(self, dim, keepdim);
}

namespace {
// formula(a, b) on bfloat16/float16 operands computed in float32 and rounded once to their
// dtype, as PyTorch's fused backward kernels compute it; other dtypes as they are. (Each op
// of the formula would otherwise round, and s·(g - Σ g·s) cancels: the rounding of the
// difference would then be most of a small result.) The casts are recorded ops, so the
// formula stays differentiable.
template <class Formula>
Tensor in_float32_for_16_bit(const std::array<Tensor, 2>& operands, const Formula& formula) {
  const DType dtype = operands[0].dtype();
  if (!is_reduced_floating_point(dtype)) return formula(operands[0], operands[1]);
  return ember::to(formula(ember::to(operands[0], kFloat32), ember::to(operands[1], kFloat32)), dtype);
}
}  // namespace

Tensor softmax(const Tensor& self, std::int64_t dim) {
  EMBER_RECORD_FUNCTION("softmax", self);
  Tensor out = native::softmax(self, dim);
  if (needs_grad(self)) {
    // For s = softmax(x): dx = s * (g - sum(g * s)) along dim (the Jacobian diag(s) - s sᵀ).
    auto node = record("SoftmaxBackward0", {self}, out);
    node->save_output("result", out);
    node->set_backward([dim](Node& n, const TensorList& grads) -> TensorList {
      return {in_float32_for_16_bit({n.saved(0), grads[0]}, [dim](const Tensor& s, const Tensor& g) {
        return s * (g - ember::sum(g * s, {dim}, /*keepdim=*/true));
      })};
    });
  }
  return out;
}

Tensor log_softmax(const Tensor& self, std::int64_t dim) {
  EMBER_RECORD_FUNCTION("log_softmax", self);
  Tensor out = native::log_softmax(self, dim);
  if (needs_grad(self)) {
    // For y = log_softmax(x): dx = g - softmax(x) * sum(g) along dim, softmax(x) = exp(y).
    auto node = record("LogSoftmaxBackward0", {self}, out);
    node->save_output("result", out);
    node->set_backward([dim](Node& n, const TensorList& grads) -> TensorList {
      return {in_float32_for_16_bit({n.saved(0), grads[0]}, [dim](const Tensor& y, const Tensor& g) {
        return g - ember::exp(y) * ember::sum(g, {dim}, /*keepdim=*/true);
      })};
    });
  }
  return out;
}

}  // namespace ember
