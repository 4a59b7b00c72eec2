// autograd/batch_norm_ops.cpp — ember::batch_norm: the forward (core/batch_norm.h) and its
// backward formula, one node with PyTorch's name, NativeBatchNormBackward0.
//
// Issue 19. The forward normalises each channel with the batch statistics (training) or the
// running ones (eval) and updates the running statistics in training (core/batch_norm_plan.h).
// The backward is the closed form of core/batch_norm_plan.h, run as one fused kernel call.
// Under create_graph (double backward, gradgradcheck) the same formula is recomputed with
// public ops instead: the batch mean and variance are recomputed from the input too, so the
// second derivative sees how they depend on it (the saved ones are constants to the tape).
#include <ember/autograd/function.h>
#include <ember/autograd/grad_mode.h>
#include <ember/autograd/ops.h>
#include <ember/core/batch_norm.h>
#include <ember/core/profiler.h>

namespace ember {

using autograd::needs_grad;
using autograd::Node;
using autograd::record;
using autograd::TensorList;

namespace {

// The dims a channel's statistics run over (all but dim 1) and the [1, C, 1, ...] shape
// that broadcasts a per-channel tensor against the input.
struct ChannelDims {
  std::vector<std::int64_t> reduced;
  Shape broadcast;
};

ChannelDims channel_dims(const Tensor& input) {
  ChannelDims dims;
  dims.broadcast.assign(static_cast<std::size_t>(input.dim()), 1);
  dims.broadcast[1] = input.size(1);
  for (std::int64_t d = 0; d < input.dim(); ++d)
    if (d != 1) dims.reduced.push_back(d);
  return dims;
}

// The backward with public ops, differentiable again (create_graph = true).
TensorList differentiable_backward(Node& n, const Tensor& grad, const Tensor& x, const Tensor& weight,
                                   const Tensor& save_mean, const Tensor& save_invstd, bool training, double eps) {
  const ChannelDims dims = channel_dims(x);
  Tensor mean, invstd;
  if (training) {
    mean = ember::mean(x, dims.reduced, true);
    Tensor centred = x - mean;
    invstd = ember::rsqrt(ember::mean(centred * centred, dims.reduced, true) + eps);
  } else {  // the running statistics: constants
    mean = ember::reshape(save_mean, dims.broadcast);
    invstd = ember::reshape(save_invstd, dims.broadcast);
  }
  Tensor normalised = (x - mean) * invstd;
  Tensor grad_input, grad_weight, grad_bias;
  if (n.needs_input_grad(0)) {
    Tensor scale = weight.defined() ? invstd * ember::reshape(weight, dims.broadcast) : invstd;
    grad_input = training ? (grad - ember::mean(grad, dims.reduced, true) -
                             normalised * ember::mean(grad * normalised, dims.reduced, true)) *
                                scale
                          : grad * scale;
  }
  if (n.needs_input_grad(1)) grad_weight = ember::sum(grad * normalised, dims.reduced);
  if (n.needs_input_grad(2)) grad_bias = ember::sum(grad, dims.reduced);
  return {grad_input, grad_weight, grad_bias};
}

}  // namespace

Tensor batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                  const Tensor& running_var, bool training, double momentum, double eps) {
  EMBER_RECORD_FUNCTION("batch_norm", input, weight, bias, running_mean, running_var);
  native::BatchNormResult result =
      native::batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps);
  if (needs_grad(input, weight, bias)) {
    auto node = record("NativeBatchNormBackward0", {input, weight, bias}, result.output);
    node->save("input", input);
    node->save("weight", weight);
    node->save("result1", result.save_mean);  // PyTorch's names for save_mean / save_invstd
    node->save("result2", result.save_invstd);
    // weight and bias need only C elements (PyTorch checks numel): their gradients, computed
    // as [C], are given back in the parameters' own shapes.
    Shape weight_sizes = weight.defined() ? weight.sizes() : Shape{};
    Shape bias_sizes = bias.defined() ? bias.sizes() : Shape{};
    node->set_backward([training, eps, weight_sizes, bias_sizes](Node& n, const TensorList& grads) -> TensorList {
      Tensor x = n.saved(0), w = n.saved(1), save_mean = n.saved(2), save_invstd = n.saved(3);
      TensorList result;
      if (is_grad_enabled()) {
        result = differentiable_backward(n, grads[0], x, w, save_mean, save_invstd, training, eps);
      } else {
        native::BatchNormGradients g = native::batch_norm_backward(
            grads[0], x, w, save_mean, save_invstd, training,
            {n.needs_input_grad(0), n.needs_input_grad(1), n.needs_input_grad(2)});
        result = {g.grad_input, g.grad_weight, g.grad_bias};
      }
      if (result[1].defined()) result[1] = ember::reshape(result[1], weight_sizes);
      if (result[2].defined()) result[2] = ember::reshape(result[2], bias_sizes);
      return result;
    });
  }
  return result.output;
}

}  // namespace ember
