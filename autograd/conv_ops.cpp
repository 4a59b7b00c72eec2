// autograd/conv_ops.cpp — differentiable conv2d (ConvolutionBackward0).
//
// Issue 19. For out = conv(x, W) + b (core/conv.cpp, core/conv_plans.h) the gradients are
//   d x = conv_input_grad(d out, W)      (the transposed convolution: im2col's adjoint)
//   d W = conv_weight_grad(x, d out)     (input patches times the output gradient)
//   d b = Σ_{n, y, x} d out
// Each of the three maps is linear in each of its two tensor arguments, and their adjoints
// are each other, so each is recorded here as a differentiable op whose backward formula
// uses the other two:
//   conv_input_grad(g, W):  d g = conv(gg, W),               d W = conv_weight_grad(gg, g)
//   conv_weight_grad(x, g): d x = conv_input_grad(g, gg),    d g = conv(x, gg)
// which is why gradgradcheck (create_graph=true) holds to any order without a formula of its
// own. The nodes are named as PyTorch names them: ConvolutionBackward0 for the forward, and
// ConvolutionBackwardBackward0 for the backward ops.
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

Tensor conv_forward(const Tensor& input, const Tensor& weight, const Tensor& bias, const native::Conv2dArgs& args);
Tensor conv_input_grad(const Tensor& grad_output, const Tensor& weight, const Shape& input_sizes,
                       const native::Conv2dArgs& args);
Tensor conv_weight_grad(const Tensor& input, const Tensor& grad_output, const Shape& weight_sizes,
                        const native::Conv2dArgs& args);

Tensor conv_forward(const Tensor& input, const Tensor& weight, const Tensor& bias, const native::Conv2dArgs& args) {
  Tensor out = native::conv2d(input, weight, bias, args);
  if (needs_grad(input, weight, bias)) {
    auto node = record("ConvolutionBackward0", {input, weight, bias}, out);
    node->save("input", input);
    node->save("weight", weight);
    node->set_backward([args](Node& n, const TensorList& grads) -> TensorList {
      const Tensor& g = grads[0];
      Tensor x = n.saved(0), w = n.saved(1);
      return {n.needs_input_grad(0) ? conv_input_grad(g, w, x.sizes(), args) : Tensor(),
              n.needs_input_grad(1) ? conv_weight_grad(x, g, w.sizes(), args) : Tensor(),
              n.needs_input_grad(2) ? ember::sum(g, {0, 2, 3}) : Tensor()};
    });
  }
  return out;
}

Tensor conv_input_grad(const Tensor& grad_output, const Tensor& weight, const Shape& input_sizes,
                       const native::Conv2dArgs& args) {
  Tensor out = native::conv2d_backward_input(grad_output, weight, input_sizes, args);
  if (needs_grad(grad_output, weight)) {
    auto node = record("ConvolutionBackwardBackward0", {grad_output, weight}, out);
    node->save("grad_output", grad_output);
    node->save("weight", weight);
    node->set_backward([args](Node& n, const TensorList& grads) -> TensorList {
      const Tensor& gg = grads[0];
      Tensor g = n.saved(0), w = n.saved(1);
      return {n.needs_input_grad(0) ? conv_forward(gg, w, Tensor(), args) : Tensor(),
              n.needs_input_grad(1) ? conv_weight_grad(gg, g, w.sizes(), args) : Tensor()};
    });
  }
  return out;
}

Tensor conv_weight_grad(const Tensor& input, const Tensor& grad_output, const Shape& weight_sizes,
                        const native::Conv2dArgs& args) {
  Tensor out = native::conv2d_backward_weight(input, grad_output, weight_sizes, args);
  if (needs_grad(input, grad_output)) {
    auto node = record("ConvolutionBackwardBackward0", {input, grad_output}, out);
    node->save("input", input);
    node->save("grad_output", grad_output);
    node->set_backward([args](Node& n, const TensorList& grads) -> TensorList {
      const Tensor& gg = grads[0];
      Tensor x = n.saved(0), g = n.saved(1);
      return {n.needs_input_grad(0) ? conv_input_grad(g, gg, x.sizes(), args) : Tensor(),
              n.needs_input_grad(1) ? conv_forward(x, gg, Tensor(), args) : Tensor()};
    });
  }
  return out;
}

}  // namespace

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, const ExpandingArray<2>& stride,
              const ExpandingArray<2>& padding, const ExpandingArray<2>& dilation, std::int64_t groups) {
  if (autocast::active()) {  // autograd/autocast.h: a lower-precision op
    const autocast::SuspendGuard cast_once;
    return ember::conv2d(autocast::to_lower_precision(input), autocast::to_lower_precision(weight),
                         autocast::to_lower_precision(bias), stride, padding, dilation, groups);
  }
  EMBER_RECORD_FUNCTION("conv2d", input, weight, bias);
  const native::Conv2dArgs args = native::check_conv2d(input, weight, bias, stride, padding, dilation, groups);
  // An unbatched (C, H, W) input is a batch of one, as PyTorch treats it.
  if (input.dim() == 3) return ember::squeeze(conv_forward(ember::unsqueeze(input, 0), weight, bias, args), 0);
  return conv_forward(input, weight, bias, args);
}

}  // namespace ember
