// autograd/elementwise_ops.cpp — the differentiable binary elementwise ops (+ - * / pow,
// maximum, minimum), clamp, where, masked_fill and the comparisons. The unary ops and the
// backward kernels are in autograd/derivatives.cpp, one row each.
//
// Tutorial §3–§4: `z = w1 * x1 + b; a = torch.sigmoid(z)` records MulBackward0, AddBackward0
// and SigmoidBackward0. Each op below computes its value with ember::native and, when an
// input requires grad, records a node whose formula (next to the forward) maps
// d loss / d out to d loss / d inputs. Binary ops broadcast, so each input's gradient is
// summed back to that input's shape with sum_to (view_ops.cpp).
// Formulas use ember's public ops, so they are themselves differentiable (create_graph).
#include <ember/autograd/function.h>
#include <ember/autograd/fused_ops.h>
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
// Bool mask -> 0/1 in the gradient's dtype, to multiply a gradient with.
Tensor as_factor(const Tensor& mask, const Tensor& like) { return ember::to(mask, like.dtype()); }
}  // namespace

// ---------------------------------------------------------------- + - * /
Tensor add(const Tensor& a, const Tensor& b, Scalar alpha) {
  EMBER_RECORD_FUNCTION("add", a, b);
  Tensor out = native::add(a, b, alpha);
  if (needs_grad(a, b)) {
    // d(a + alpha*b)/da = 1, /db = alpha. Only the shapes are needed, not the values.
    Shape a_sizes = a.sizes(), b_sizes = b.sizes();
    bool unit_alpha = alpha.to_double() == 1.0;
    auto node = record("AddBackward0", {a, b}, out);
    node->set_backward([=](Node& n, const TensorList& grads) -> TensorList {
      const Tensor& g = grads[0];
      return {n.needs_input_grad(0) ? sum_to(g, a_sizes) : Tensor(),
              n.needs_input_grad(1) ? sum_to(unit_alpha ? g : g * alpha, b_sizes) : Tensor()};
    });
  }
  return out;
}

Tensor sub(const Tensor& a, const Tensor& b, Scalar alpha) {
  EMBER_RECORD_FUNCTION("sub", a, b);
  Tensor out = native::sub(a, b, alpha);
  if (needs_grad(a, b)) {
    Shape a_sizes = a.sizes(), b_sizes = b.sizes();
    bool unit_alpha = alpha.to_double() == 1.0;
    auto node = record("SubBackward0", {a, b}, out);
    node->set_backward([=](Node& n, const TensorList& grads) -> TensorList {
      const Tensor& g = grads[0];
      return {n.needs_input_grad(0) ? sum_to(g, a_sizes) : Tensor(),
              n.needs_input_grad(1) ? sum_to(unit_alpha ? -g : -(g * alpha), b_sizes) : Tensor()};
    });
  }
  return out;
}

Tensor mul(const Tensor& a, const Tensor& b) {
  EMBER_RECORD_FUNCTION("mul", a, b);
  Tensor out = native::mul(a, b);
  if (needs_grad(a, b)) {
    // d(a*b)/da = b, d(a*b)/db = a: each factor is saved for the other's gradient.
    auto node = record("MulBackward0", {a, b}, out);
    node->save("self", a);
    node->save("other", b);
    node->set_backward([](Node& n, const TensorList& grads) -> TensorList {
      const Tensor& g = grads[0];
      Tensor self = n.saved(0), other = n.saved(1);
      return {n.needs_input_grad(0) ? sum_to(g * other, self.sizes()) : Tensor(),
              n.needs_input_grad(1) ? sum_to(g * self, other.sizes()) : Tensor()};
    });
  }
  return out;
}

Tensor div(const Tensor& a, const Tensor& b) {
  EMBER_RECORD_FUNCTION("div", a, b);
  Tensor out = native::div(a, b);
  if (needs_grad(a, b)) {
    // d(a/b)/da = 1/b, d(a/b)/db = -a/b².
    auto node = record("DivBackward0", {a, b}, out);
    node->save("self", a);
    node->save("other", b);
    node->set_backward([](Node& n, const TensorList& grads) -> TensorList {
      const Tensor& g = grads[0];
      Tensor self = n.saved(0), other = n.saved(1);
      return {n.needs_input_grad(0) ? sum_to(g / other, self.sizes()) : Tensor(),
              n.needs_input_grad(1) ? sum_to(-g * self / (other * other), other.sizes()) : Tensor()};
    });
  }
  return out;
}

Tensor pow(const Tensor& self, Scalar exponent) {
  EMBER_RECORD_FUNCTION("pow", self);
  Tensor out = native::pow(self, exponent);
  if (needs_grad(self)) {
    // d x^e = e * x^(e-1); x^0 is constant.
    auto node = record("PowBackward0", {self}, out);
    node->save("self", self);
    double e = exponent.to_double();
    node->set_backward([e, exponent](Node& n, const TensorList& grads) -> TensorList {
      Tensor x = n.saved(0);
      if (e == 0.0) return {zeros_like(grads[0])};
      return {grads[0] * (ember::pow(x, e - 1.0) * exponent)};
    });
  }
  return out;
}

Tensor pow(const Tensor& self, const Tensor& exponent) {
  EMBER_RECORD_FUNCTION("pow", self, exponent);
  Tensor out = native::pow(self, exponent);
  if (needs_grad(self, exponent)) {
    // d x^y / dx = y x^(y-1);  d x^y / dy = x^y log x (taken as 0 where x = 0, as PyTorch).
    auto node = record("PowBackward1", {self, exponent}, out);
    node->save("self", self);
    node->save("exponent", exponent);
    node->save_output("result", out);
    node->set_backward([](Node& n, const TensorList& grads) -> TensorList {
      const Tensor& g = grads[0];
      Tensor x = n.saved(0), y = n.saved(1), result = n.saved(2);
      Tensor grad_x, grad_y;
      if (n.needs_input_grad(0)) grad_x = sum_to(g * y * ember::pow(x, y - 1.0), x.sizes());
      if (n.needs_input_grad(1)) {
        Tensor term = ember::where(x == 0.0, zeros_like(result), result * ember::log(x));
        grad_y = sum_to(g * term, y.sizes());
      }
      return {grad_x, grad_y};
    });
  }
  return out;
}

Tensor clamp(const Tensor& self, std::optional<Scalar> min, std::optional<Scalar> max) {
  EMBER_RECORD_FUNCTION("clamp", self);
  Tensor out = native::clamp(self, min, max);
  if (needs_grad(self)) {
    // The gradient passes where the value was strictly inside (min, max): a value on a bound
    // gets none, nor does NaN (PyTorch 2.x, measured on 2.15; 1.13 let the bounds through).
    auto node = record("ClampBackward1", {self}, out);
    node->save("self", self);
    node->set_backward([min, max](Node& n, const TensorList& grads) -> TensorList {
      Tensor x = n.saved(0);
      Tensor inside = ones_like(x, TensorOptions().dtype(kBool));
      if (min) inside = ember::logical_and(inside, x > *min);
      if (max) inside = ember::logical_and(inside, x < *max);
      return {grads[0] * as_factor(inside, grads[0])};
    });
  }
  return out;
}

Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b) {
  EMBER_RECORD_FUNCTION("where", condition, a, b);
  Tensor out = native::where(condition, a, b);
  if (needs_grad(a, b)) {
    // Each branch gets the gradient where it was chosen, zero elsewhere.
    Shape a_sizes = a.sizes(), b_sizes = b.sizes();
    auto node = record("WhereBackward0", {a, b}, out);
    node->save("condition", condition);
    node->set_backward([a_sizes, b_sizes](Node& n, const TensorList& grads) -> TensorList {
      const Tensor& g = grads[0];
      Tensor cond = n.saved(0);
      Tensor zero = zeros_like(g);
      return {n.needs_input_grad(0) ? sum_to(ember::where(cond, g, zero), a_sizes) : Tensor(),
              n.needs_input_grad(1) ? sum_to(ember::where(cond, zero, g), b_sizes) : Tensor()};
    });
  }
  return out;
}

Tensor clamp(const Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  EMBER_RECORD_FUNCTION("clamp", self, min, max);
  Tensor out = native::clamp(self, min, max);
  TensorList inputs{self};
  if (min) inputs.push_back(*min);
  if (max) inputs.push_back(*max);
  if (autograd::any_needs_grad(inputs)) {
    // PyTorch's ClampBackward0 (measured, tests/reference/gen_element_ops.py): when min > max,
    // max gets the whole gradient; otherwise min where x < min, max where x > max, x in
    // between, and on a tie with exactly one bound the gradient is split in halves, as
    // maximum/minimum split theirs. x == min == max gives x all of it; a NaN anywhere too.
    auto node = record("ClampBackward0", inputs, out);
    for (std::size_t i = 0; i < inputs.size(); ++i) node->save(i == 0 ? "self" : (min && i == 1 ? "min" : "max"), inputs[i]);
    const bool has_min = min.has_value(), has_max = max.has_value();
    node->set_backward([has_min, has_max](Node& n, const TensorList& grads) -> TensorList {
      const Tensor& g = grads[0];
      Tensor x = n.saved(0), low = has_min ? n.saved(1) : Tensor(), high = has_max ? n.saved(has_min ? 2 : 1) : Tensor();
      Tensor zero = zeros_like(g);
      Tensor below = has_min ? as_factor(x < low, g) : zero, at_min = has_min ? as_factor(x == low, g) : zero;
      Tensor above = has_max ? as_factor(x > high, g) : zero, at_max = has_max ? as_factor(x == high, g) : zero;
      Tensor crossed = has_min && has_max ? as_factor(low > high, g) : zero;
      Tensor kept = 1.0 - crossed;
      Tensor one_tie = (at_min + at_max - at_min * at_max * 2.0) * 0.5;  // 0.5 on a tie with one bound
      TensorList result{n.needs_input_grad(0) ? sum_to(g * (kept * (1.0 - below) * (1.0 - above) * (1.0 - one_tie)), x.sizes())
                                              : Tensor()};
      if (has_min) {
        Tensor weight = kept * (below + at_min * (1.0 - at_max) * 0.5);
        result.push_back(n.needs_input_grad(1) ? sum_to(g * weight, low.sizes()) : Tensor());
      }
      if (has_max) {
        Tensor weight = crossed + kept * (above + at_max * (1.0 - at_min) * 0.5);
        result.push_back(n.needs_input_grad(result.size()) ? sum_to(g * weight, high.sizes()) : Tensor());
      }
      return result;
    });
  }
  return out;
}

Tensor masked_fill(const Tensor& self, const Tensor& mask, const Tensor& value) {
  EMBER_RECORD_FUNCTION("masked_fill", self, mask, value);
  Tensor out = native::masked_fill(self, mask, value);
  if (needs_grad(self, value)) {
    // self's gradient where the mask is false; value's is the sum of the rest.
    auto node = record("MaskedFillBackward0", {self, value}, out);
    node->save("mask", mask);
    node->set_backward([](Node& n, const TensorList& grads) -> TensorList {
      const Tensor& g = grads[0];
      Tensor mask = n.saved(0);
      Tensor kept = ember::masked_fill(g, mask, 0);
      return {n.needs_input_grad(0) ? kept : Tensor(),
              n.needs_input_grad(1) ? ember::sum(g - kept) : Tensor()};
    });
  }
  return out;
}

Tensor masked_fill(const Tensor& self, const Tensor& mask, Scalar value) {
  EMBER_RECORD_FUNCTION("masked_fill", self, mask);
  return ember::masked_fill(self, mask, scalar_to_tensor(value));
}

namespace {
// maximum/minimum: the gradient goes to the selected input; on a tie it is split in half
// between both (PyTorch's rule), so the two halves still add up to the full gradient.
Tensor extremum(const Tensor& a, const Tensor& b, bool is_max) {
  Tensor out = is_max ? native::maximum(a, b) : native::minimum(a, b);
  if (needs_grad(a, b)) {
    auto node = record(is_max ? "MaximumBackward0" : "MinimumBackward0", {a, b}, out);
    node->save("self", a);
    node->save("other", b);
    node->set_backward([is_max](Node& n, const TensorList& grads) -> TensorList {
      const Tensor& g = grads[0];
      Tensor x = n.saved(0), y = n.saved(1);
      Tensor x_wins = as_factor(is_max ? x > y : x < y, g);
      Tensor tie = as_factor(x == y, g) * 0.5;
      Tensor y_wins = as_factor(is_max ? y > x : y < x, g);
      return {n.needs_input_grad(0) ? sum_to(g * (x_wins + tie), x.sizes()) : Tensor(),
              n.needs_input_grad(1) ? sum_to(g * (y_wins + tie), y.sizes()) : Tensor()};
    });
  }
  return out;
}
}  // namespace

Tensor maximum(const Tensor& a, const Tensor& b) {
  EMBER_RECORD_FUNCTION("maximum", a, b);
  return extremum(a, b, true);
}
Tensor minimum(const Tensor& a, const Tensor& b) {
  EMBER_RECORD_FUNCTION("minimum", a, b);
  return extremum(a, b, false);
}

// ---------------------------------------------------------------- comparisons (no gradient)
// The rows of core/op_list.h whose result is Bool.
#define EMBER_DEFINE_COMPARISON(name, Functor, result, ...) EMBER_COMPARISON_##result(name)
#define EMBER_COMPARISON_Bool(name)           \
  Tensor name(const Tensor& a, const Tensor& b) { \
    EMBER_RECORD_FUNCTION(#name, a, b);         \
    return native::name(a, b);                  \
  }
#define EMBER_COMPARISON_SameDType(name)  // differentiable: written out above
EMBER_BINARY_OPS(EMBER_DEFINE_COMPARISON)
#undef EMBER_COMPARISON_SameDType
#undef EMBER_COMPARISON_Bool
#undef EMBER_DEFINE_COMPARISON

}  // namespace ember
