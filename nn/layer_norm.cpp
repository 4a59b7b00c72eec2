// nn/layer_norm.cpp — nn::LayerNorm (see layer_norm.h); F::layer_norm is inline in
// nn/functional.h and both call ember::layer_norm (autograd/layer_norm_ops.cpp).
#include <ember/nn/layer_norm.h>

#include <ember/autograd/grad_mode.h>
#include <ember/autograd/ops.h>
#include <ember/core/factories.h>
#include <ember/nn/functional.h>
#include <ember/nn/python_format.h>

namespace ember::nn {

namespace {

// Python's repr of a tuple of ints: (8,) or (3, 4).
std::string python_int_tuple(const std::vector<std::int64_t>& items) {
  std::string text = "(";
  for (std::size_t i = 0; i < items.size(); ++i) text += (i ? ", " : "") + std::to_string(items[i]);
  return text + (items.size() == 1 ? ",)" : ")");
}

}  // namespace

LayerNorm::LayerNorm(LayerNormOptions options_) : options(std::move(options_)) {
  for (std::int64_t size : options.normalized_shape())
    EMBER_CHECK(size >= 0, ValueError, "Trying to create tensor with negative dimension ", size, ": ",
                shape_to_string(options.normalized_shape()));
  if (options.elementwise_affine()) {
    weight = register_parameter("weight", ember::empty(options.normalized_shape()));
    if (options.bias()) bias = register_parameter("bias", ember::empty(options.normalized_shape()));
  }
  reset_parameters();
}

void LayerNorm::reset_parameters() {
  if (!weight.defined()) return;
  NoGradGuard no_grad;
  weight.fill_(1);
  if (bias.defined()) bias.zero_();
}

Tensor LayerNorm::forward(const Tensor& input) {
  return functional::layer_norm(input, options.normalized_shape(), weight, bias, options.eps());
}

std::string LayerNorm::extra_repr() const {
  auto python_bool = [](bool value) { return value ? "True" : "False"; };
  return python_int_tuple(options.normalized_shape()) + ", eps=" + python_float(options.eps()) +
         ", elementwise_affine=" + python_bool(options.elementwise_affine()) + ", bias=" + python_bool(bias.defined());
}

}  // namespace ember::nn
