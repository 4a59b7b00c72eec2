// autograd/layer_norm_ops.cpp — ember::layer_norm: the forward (core/layer_norm.h) and its
// backward formula, one node with PyTorch's name, NativeLayerNormBackward0.
//
// Issue 21. The forward normalises each row (the last normalized_shape.size() dims) with its
// own mean and biased variance (core/layer_norm_plan.h). The backward is the closed form of
// core/layer_norm_plan.h, run as one fused kernel call. Under create_graph (double backward,
// gradgradcheck) the same formula is recomputed with public ops instead, the mean and rstd
// recomputed from the input too, so that the second derivative sees how they depend on it
// (the saved ones are constants to the tape). PyTorch records a fused
// NativeLayerNormBackwardBackward0 there; ember's second-order graph is the composite's nodes.
#include <ember/autograd/function.h>
#include <ember/autograd/grad_mode.h>
#include <ember/autograd/ops.h>
#include <ember/core/layer_norm.h>
#include <ember/core/profiler.h>

namespace ember {

using autograd::needs_grad;
using autograd::Node;
using autograd::record;
using autograd::TensorList;

namespace {

// The dims a row's statistics run over (the last `normalized` dims) and the leading ones the
// parameters' gradients sum over.
struct RowDims {
  std::vector<std::int64_t> normalized, leading;
};

RowDims row_dims(const Tensor& input, std::size_t normalized_dims) {
  RowDims dims;
  const std::int64_t first = input.dim() - static_cast<std::int64_t>(normalized_dims);
  for (std::int64_t d = 0; d < input.dim(); ++d) (d < first ? dims.leading : dims.normalized).push_back(d);
  return dims;
}

// Σ over the leading dims; none left (the input is one row) means the tensor itself — an
// empty dim list would sum everything.
Tensor sum_leading(const Tensor& tensor, const std::vector<std::int64_t>& leading) {
  return leading.empty() ? tensor : ember::sum(tensor, leading);
}

// The backward with public ops, differentiable again (create_graph = true).
TensorList differentiable_backward(Node& n, const Tensor& grad, const Tensor& x, const Tensor& weight,
                                   std::size_t normalized_dims, double eps) {
  const RowDims dims = row_dims(x, normalized_dims);
  Tensor mean = ember::mean(x, dims.normalized, true);
  Tensor centred = x - mean;
  Tensor rstd = ember::rsqrt(ember::mean(centred * centred, dims.normalized, true) + eps);
  Tensor normalised = centred * rstd;
  Tensor grad_input, grad_weight, grad_bias;
  if (n.needs_input_grad(0)) {
    Tensor g = weight.defined() ? grad * weight : grad;
    grad_input = (g - ember::mean(g, dims.normalized, true) -
                  normalised * ember::mean(g * normalised, dims.normalized, true)) *
                 rstd;
  }
  if (n.needs_input_grad(1)) grad_weight = sum_leading(grad * normalised, dims.leading);
  if (n.needs_input_grad(2)) grad_bias = sum_leading(grad, dims.leading);
  return {grad_input, grad_weight, grad_bias};
}

}  // namespace

Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight, const Tensor& bias,
                  double eps) {
  EMBER_RECORD_FUNCTION("layer_norm", input, weight, bias);
  native::LayerNormResult result = native::layer_norm(input, normalized_shape, weight, bias, eps);
  if (needs_grad(input, weight, bias)) {
    auto node = record("NativeLayerNormBackward0", {input, weight, bias}, result.output);
    // PyTorch's saved names (normalized_shape is captured below).
    node->save("input", input);
    node->save("weight", weight);
    node->save("bias", bias);
    node->save("result1", result.mean);
    node->save("result2", result.rstd);
    Shape shape(normalized_shape.begin(), normalized_shape.end());
    node->set_backward([shape, eps](Node& n, const TensorList& grads) -> TensorList {
      Tensor x = n.saved(0), w = n.saved(1), b = n.saved(2), mean = n.saved(3), rstd = n.saved(4);
      if (is_grad_enabled()) return differentiable_backward(n, grads[0], x, w, shape.size(), eps);
      native::LayerNormGradients g = native::layer_norm_backward(
          grads[0], x, shape, mean, rstd, w, b, {n.needs_input_grad(0), n.needs_input_grad(1), n.needs_input_grad(2)});
      return {g.grad_input, g.grad_weight, g.grad_bias};
    });
  }
  return result.output;
}

}  // namespace ember
