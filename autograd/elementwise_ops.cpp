// autograd/elementwise_ops.cpp — differentiable elementwise ops and their backward formulas.
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

Tensor neg(const Tensor& self) {
  Tensor out = native::neg(self);
  if (needs_grad(self)) {
    auto node = record("NegBackward0", {self}, out);
    node->set_backward([](Node&, const TensorList& grads) -> TensorList { return {-grads[0]}; });
  }
  return out;
}

// ---------------------------------------------------------------- unary math
Tensor exp(const Tensor& self) {
  Tensor out = native::exp(self);
  if (needs_grad(self)) {
    // d exp(x) = exp(x): the output itself is the derivative, so the output is saved.
    auto node = record("ExpBackward0", {self}, out);
    node->save_output("result", out);
    node->set_backward([](Node& n, const TensorList& grads) -> TensorList { return {grads[0] * n.saved(0)}; });
  }
  return out;
}

Tensor log(const Tensor& self) {
  Tensor out = native::log(self);
  if (needs_grad(self)) {
    auto node = record("LogBackward0", {self}, out);
    node->save("self", self);
    node->set_backward([](Node& n, const TensorList& grads) -> TensorList { return {grads[0] / n.saved(0)}; });
  }
  return out;
}

Tensor sqrt(const Tensor& self) {
  Tensor out = native::sqrt(self);
  if (needs_grad(self)) {
    // d sqrt(x) = 1 / (2 sqrt(x)).
    auto node = record("SqrtBackward0", {self}, out);
    node->save_output("result", out);
    node->set_backward([](Node& n, const TensorList& grads) -> TensorList {
      return {grads[0] / (n.saved(0) * 2)};
    });
  }
  return out;
}

Tensor abs(const Tensor& self) {
  Tensor out = native::abs(self);
  if (needs_grad(self)) {
    // d|x| = sign(x) (0 at x = 0, as PyTorch).
    auto node = record("AbsBackward0", {self}, out);
    node->save("self", self);
    node->set_backward([](Node& n, const TensorList& grads) -> TensorList {
      return {grads[0] * ember::sign(n.saved(0))};
    });
  }
  return out;
}

// sign is piecewise constant: its gradient is zero everywhere, so nothing is recorded
// (PyTorch records SignBackward0 returning zeros; the result is the same).
Tensor sign(const Tensor& self) { return native::sign(self); }

Tensor pow(const Tensor& self, Scalar exponent) {
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

// ---------------------------------------------------------------- activations
Tensor sigmoid(const Tensor& self) {
  Tensor out = native::sigmoid(self);
  if (needs_grad(self)) {
    // σ'(x) = σ(x) (1 - σ(x)): written with the saved output, no exp needed.
    auto node = record("SigmoidBackward0", {self}, out);
    node->save_output("result", out);
    node->set_backward([](Node& n, const TensorList& grads) -> TensorList {
      Tensor s = n.saved(0);
      return {grads[0] * s * (1.0 - s)};
    });
  }
  return out;
}

Tensor tanh(const Tensor& self) {
  Tensor out = native::tanh(self);
  if (needs_grad(self)) {
    // tanh'(x) = 1 - tanh(x)².
    auto node = record("TanhBackward0", {self}, out);
    node->save_output("result", out);
    node->set_backward([](Node& n, const TensorList& grads) -> TensorList {
      Tensor t = n.saved(0);
      return {grads[0] * (1.0 - t * t)};
    });
  }
  return out;
}

namespace {
// ReLU's backward as one differentiable op: PyTorch's threshold_backward(grad, result, 0),
// one fused pass (native::relu_backward) instead of gt + to + mul. It only records when
// backward itself is recorded (create_graph): then, as in PyTorch, the node is
// ThresholdBackwardBackward0, whose gradient w.r.t. grad is the same mask again and w.r.t.
// result is zero (none is returned), so every higher derivative stays available.
Tensor threshold_backward(const Tensor& grad, const Tensor& result) {
  Tensor out = native::relu_backward(grad, result);
  if (needs_grad(grad, result)) {
    auto node = record("ThresholdBackwardBackward0", {grad, result}, out);
    node->save("self", result);
    node->set_backward([](Node& n, const TensorList& grads) -> TensorList {
      return {n.needs_input_grad(0) ? threshold_backward(grads[0], n.saved(0)) : Tensor(), Tensor()};
    });
  }
  return out;
}

// The ReluBackward0 node behind `out` = relu(input): saves the result (relu'(x) = 1 exactly
// where the result is > 0).
void record_relu(const Tensor& input, const Tensor& out) {
  auto node = record("ReluBackward0", {input}, out);
  node->save_output("result", out);
  node->set_backward([](Node& n, const TensorList& grads) -> TensorList {
    return {threshold_backward(grads[0], n.saved(0))};
  });
}
}  // namespace

Tensor relu(const Tensor& self) {
  Tensor out = native::relu(self);
  if (needs_grad(self)) record_relu(self, out);
  return out;
}

Tensor relu_of_fresh(const Tensor& fresh) {
  // relu written over `fresh`'s memory and a new handle on its storage: `fresh` stays the
  // pre-activation on the tape (the output of its own node, e.g. AddmmBackward0), the new
  // handle is relu's result. Safe only because nothing reads fresh's values afterwards:
  // the caller promises nobody else holds it, its producer did not save it, and
  // ReluBackward0 saves the result, not its input. The two handles share one storage
  // object (core/fused.cpp): one version counter for later in-place writes, and a result
  // still shared with a live `fresh` is never stolen as someone's .grad.
  Tensor out = native::relu_over_fresh(fresh);
  if (needs_grad(fresh)) record_relu(fresh, out);
  return out;
}

Tensor clamp(const Tensor& self, std::optional<Scalar> min, std::optional<Scalar> max) {
  Tensor out = native::clamp(self, min, max);
  if (needs_grad(self)) {
    // The gradient passes where the value was inside [min, max] (bounds included, as PyTorch).
    auto node = record("ClampBackward1", {self}, out);
    node->save("self", self);
    node->set_backward([min, max](Node& n, const TensorList& grads) -> TensorList {
      Tensor x = n.saved(0);
      Tensor inside = ones_like(x, TensorOptions().dtype(kBool));
      if (min) inside = ember::logical_and(inside, x >= *min);
      if (max) inside = ember::logical_and(inside, x <= *max);
      return {grads[0] * as_factor(inside, grads[0])};
    });
  }
  return out;
}

Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b) {
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

Tensor maximum(const Tensor& a, const Tensor& b) { return extremum(a, b, true); }
Tensor minimum(const Tensor& a, const Tensor& b) { return extremum(a, b, false); }

// ---------------------------------------------------------------- comparisons (no gradient)
Tensor eq(const Tensor& a, const Tensor& b) { return native::eq(a, b); }
Tensor ne(const Tensor& a, const Tensor& b) { return native::ne(a, b); }
Tensor lt(const Tensor& a, const Tensor& b) { return native::lt(a, b); }
Tensor le(const Tensor& a, const Tensor& b) { return native::le(a, b); }
Tensor gt(const Tensor& a, const Tensor& b) { return native::gt(a, b); }
Tensor ge(const Tensor& a, const Tensor& b) { return native::ge(a, b); }
Tensor logical_and(const Tensor& a, const Tensor& b) { return native::logical_and(a, b); }

}  // namespace ember
