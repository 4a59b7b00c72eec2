// autograd/derivatives.cpp — the derivative of every unary op and backward kernel, one row
// each, and the one function that records them.
//
// Tutorial §4 (autograd): `a = torch.sigmoid(z)` records SigmoidBackward0, which saves the
// output and maps d loss / d a to d loss / d z. Here that is the row
//     case UnaryOp::Sigmoid: return {"SigmoidBackward0", Saves::Result, ...grad * s * (1 - s)};
// and ember::sigmoid(z) is native::unary(UnaryOp::Sigmoid, z) plus record_unary. The rows
// mirror PyTorch's derivatives.yaml: the node name PyTorch shows, what it saves, the formula
// written with ember's differentiable ops (so backward itself is differentiable). The forward
// arithmetic is the op's functor in core/element_functions.h; its name, dtypes and method are
// its row in core/op_list.h.
#include <cmath>

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

// ReLU's backward as one differentiable op: PyTorch's threshold_backward(grad, result, 0),
// one fused pass instead of gt + to + mul. It only records when backward itself is recorded
// (create_graph): then, as in PyTorch, the node is ThresholdBackwardBackward0, whose gradient
// w.r.t. grad is the same mask again and w.r.t. result is zero (none is returned).
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

// ---------------------------------------------------------------- backward kernels
// out = grad · f'(x) in one pass (core/op_list.h, EMBER_BACKWARD_OPS). Linear in grad, so
// the derivative w.r.t. grad is the same kernel again; w.r.t. x it is grad · f''(x), the
// row's second derivative, written with ember ops.
struct BackwardDerivative {
  const char* node;
  Tensor (*kernel)(const Tensor& grad, const Tensor& x);
  Tensor (*second_derivative)(const Tensor& x);
};

// The standard normal density φ(x) = exp(-x²/2) / √(2π).
Tensor normal_density(const Tensor& x) { return ember::exp(ember::pow(x, 2) * -0.5) * (1.0 / std::sqrt(2.0 * M_PI)); }

BackwardDerivative backward_derivative_of(BinaryOp op) {
  switch (op) {
    case BinaryOp::TanhBackward:  // d(1 - y²)/dy = -2y
      return {"TanhBackwardBackward0", native::tanh_backward, [](const Tensor& y) { return y * -2.0; }};
    case BinaryOp::GeluBackward:  // d(Φ + xφ)/dx = φ(x)(2 - x²)
      return {"GeluBackwardBackward0", native::gelu_backward,
              [](const Tensor& x) { return normal_density(x) * (2.0 - ember::pow(x, 2)); }};
    case BinaryOp::GeluTanhBackward:
      // f = ½x(1 + t), t = tanh(u), u = √(2/π)(x + κx³):
      // f'' = (1 - t²)(u' + ½x(u'' - 2t·u'²)), u' = √(2/π)(1 + 3κx²), u'' = 6√(2/π)κx.
      return {"GeluBackwardBackward0", native::gelu_tanh_backward, [](const Tensor& x) {
                const double beta = std::sqrt(2.0 / M_PI), kappa = 0.044715;
                Tensor t = ember::tanh((x + ember::pow(x, 3) * kappa) * beta);
                Tensor u1 = (ember::pow(x, 2) * (3.0 * kappa) + 1.0) * beta;
                Tensor u2 = x * (6.0 * beta * kappa);
                return (1.0 - t * t) * (u1 + x * 0.5 * (u2 - t * ember::pow(u1, 2) * 2.0));
              }};
    case BinaryOp::SiluBackward:  // d(σ(1 + x(1 - σ)))/dx = σ(1 - σ)(2 + x(1 - 2σ))
      return {"SiluBackwardBackward0", native::silu_backward, [](const Tensor& x) {
                Tensor s = ember::sigmoid(x);
                return s * (1.0 - s) * (2.0 + x * (1.0 - s * 2.0));
              }};
    default: break;
  }
  throw Error("backward_derivative_of: not a backward kernel with a derivative row");
}

Tensor backward_op(BinaryOp op, const Tensor& grad, const Tensor& x) {
  const BackwardDerivative derivative = backward_derivative_of(op);
  Tensor out = derivative.kernel(grad, x);
  if (needs_grad(grad, x)) {
    auto node = record(derivative.node, {grad, x}, out);
    node->save("grad_output", grad);
    node->save("self", x);
    node->set_backward([op, derivative](Node& n, const TensorList& grads) -> TensorList {
      const Tensor& grad_grad = grads[0];
      Tensor g = n.saved(0), x = n.saved(1);
      return {n.needs_input_grad(0) ? sum_to(backward_op(op, grad_grad, x), g.sizes()) : Tensor(),
              n.needs_input_grad(1) ? sum_to(grad_grad * g * derivative.second_derivative(x), x.sizes()) : Tensor()};
    });
  }
  return out;
}

// ---------------------------------------------------------------- unary ops
enum class Saves { Nothing, Self, Result };

struct UnaryDerivative {
  const char* node;  // nullptr: not differentiable (nothing is recorded)
  Saves saves;
  // d loss / d self, given d loss / d out and the saved tensor (self or the result).
  Tensor (*formula)(const Tensor& grad, const Tensor& saved);
};

UnaryDerivative derivative_of(UnaryOp op) {
  using T = const Tensor&;
  switch (op) {
    case UnaryOp::Neg: return {"NegBackward0", Saves::Nothing, [](T grad, T) { return -grad; }};
    // d|x| = sign(x) (0 at x = 0, as PyTorch).
    case UnaryOp::Abs: return {"AbsBackward0", Saves::Self, [](T grad, T self) { return grad * ember::sign(self); }};
    // Piecewise constant: PyTorch records SignBackward0 returning zeros; nothing changes if
    // nothing is recorded.
    case UnaryOp::Sign: return {nullptr, Saves::Nothing, nullptr};
    // relu'(x) = 1 exactly where the result is > 0.
    case UnaryOp::Relu:
      return {"ReluBackward0", Saves::Result, [](T grad, T result) { return threshold_backward(grad, result); }};
    // d exp(x) = exp(x): the output itself is the derivative.
    case UnaryOp::Exp: return {"ExpBackward0", Saves::Result, [](T grad, T result) { return grad * result; }};
    case UnaryOp::Log: return {"LogBackward0", Saves::Self, [](T grad, T self) { return grad / self; }};
    // d sqrt(x) = 1 / (2 sqrt(x)).
    case UnaryOp::Sqrt: return {"SqrtBackward0", Saves::Result, [](T grad, T result) { return grad / (result * 2); }};
    // d x^(-1/2) = -½ x^(-3/2) = -½ result³.
    case UnaryOp::Rsqrt:
      return {"RsqrtBackward0", Saves::Result, [](T grad, T result) { return (-0.5 * grad) * ember::pow(result, 3); }};
    // σ'(x) = σ(x)(1 - σ(x)), from the saved output.
    case UnaryOp::Sigmoid:
      return {"SigmoidBackward0", Saves::Result, [](T grad, T result) { return grad * result * (1.0 - result); }};
    // tanh'(x) = 1 - tanh(x)², one kernel (tanh_backward).
    case UnaryOp::Tanh:
      return {"TanhBackward0", Saves::Result,
              [](T grad, T result) { return backward_op(BinaryOp::TanhBackward, grad, result); }};
    // erf'(x) = 2/√π · exp(-x²).
    case UnaryOp::Erf:
      return {"ErfBackward0", Saves::Self,
              [](T grad, T self) { return (2.0 / std::sqrt(M_PI)) * ember::exp(-ember::pow(self, 2)) * grad; }};
    case UnaryOp::Gelu:
      return {"GeluBackward0", Saves::Self,
              [](T grad, T self) { return backward_op(BinaryOp::GeluBackward, grad, self); }};
    case UnaryOp::GeluTanh:
      return {"GeluBackward0", Saves::Self,
              [](T grad, T self) { return backward_op(BinaryOp::GeluTanhBackward, grad, self); }};
    case UnaryOp::Silu:
      return {"SiluBackward0", Saves::Self,
              [](T grad, T self) { return backward_op(BinaryOp::SiluBackward, grad, self); }};
    case UnaryOp::Clamp:
    case UnaryOp::PowScalar: break;  // take parameters: autograd/elementwise_ops.cpp
  }
  throw Error("derivative_of: unary op without a derivative row");
}

// The one recording helper of the unary ops: the node of op's row over self -> result.
void record_unary(UnaryOp op, const Tensor& self, const Tensor& result) {
  const UnaryDerivative derivative = derivative_of(op);
  if (derivative.node == nullptr) return;
  auto node = record(derivative.node, {self}, result);
  if (derivative.saves == Saves::Self) node->save("self", self);
  if (derivative.saves == Saves::Result) node->save_output("result", result);
  node->set_backward([derivative](Node& n, const TensorList& grads) -> TensorList {
    return {derivative.formula(grads[0], derivative.saves == Saves::Nothing ? Tensor() : n.saved(0))};
  });
}

Tensor unary(UnaryOp op, const Tensor& self) {
  Tensor result = native::unary(op, self);
  if (needs_grad(self)) record_unary(op, self, result);
  return result;
}

}  // namespace

#define EMBER_DEFINE_UNARY(name, Functor, ...)    \
  Tensor name(const Tensor& self) {               \
    EMBER_RECORD_FUNCTION(#name, self);           \
    return unary(UnaryOp::Functor, self);         \
  }
EMBER_UNARY_OPS(EMBER_DEFINE_UNARY)
#undef EMBER_DEFINE_UNARY

Tensor gelu(const Tensor& self, std::string_view approximate) {
  EMBER_CHECK(approximate == "none" || approximate == "tanh", ValueError,
              "approximate argument must be either none or tanh.");
  EMBER_RECORD_FUNCTION("gelu", self);
  return unary(approximate == "tanh" ? UnaryOp::GeluTanh : UnaryOp::Gelu, self);
}

Tensor relu_of_fresh(const Tensor& fresh) {
  // relu written over `fresh`'s memory and a new handle on its storage: `fresh` stays the
  // pre-activation on the tape (the output of its own node, e.g. AddmmBackward0), the new
  // handle is relu's result. Safe only because nothing reads fresh's values afterwards:
  // the caller promises nobody else holds it, its producer did not save it, and
  // ReluBackward0 saves the result, not its input. The two handles share one storage
  // object (core/fused.cpp): one version counter for later in-place writes, and a result
  // still shared with a live `fresh` is never stolen as someone's .grad.
  EMBER_RECORD_FUNCTION("relu", fresh);
  Tensor out = native::relu_over_fresh(fresh);
  if (needs_grad(fresh)) record_unary(UnaryOp::Relu, fresh, out);
  return out;
}

}  // namespace ember
