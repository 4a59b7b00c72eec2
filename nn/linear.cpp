// nn/linear.cpp — nn::Linear (see linear.h) and F::linear, which it calls.
#include <ember/nn/linear.h>

#include <algorithm>
#include <cmath>

#include <ember/autograd/autocast.h>
#include <ember/autograd/fused_ops.h>
#include <ember/autograd/grad_mode.h>
#include <ember/autograd/ops.h>
#include <ember/core/kernel_mode.h>
#include <ember/core/profiler.h>
#include <ember/core/tensor.h>
#include <ember/nn/functional.h>
#include <ember/nn/init.h>

namespace ember::nn {

Tensor functional::linear(const Tensor& input, const Tensor& weight, const Tensor& bias) {
  if (autocast::active()) {  // autograd/autocast.h: a lower-precision op; the weight's copy is cached
    const autocast::SuspendGuard cast_once;
    return functional::linear(autocast::to_lower_precision(input), autocast::to_lower_precision(weight),
                              autocast::to_lower_precision(bias));
  }
  EMBER_RECORD_FUNCTION("linear", input, weight, bias);
  // PyTorch's at::linear checks the ranks first, with its own message (a 0-d input has no
  // feature dim to multiply).
  EMBER_CHECK(input.dim() != 0 && weight.dim() != 0, ShapeError, "both arguments to linear need to be at least 1D, but they are ",
              input.dim(), "D and ", weight.dim(), "D");
  // 2-D input: bias + input @ weight^T in one fused addmm, PyTorch's fast path. Any other
  // contiguous input with a 1-D bias is viewed as rows (its leading dims folded), one addmm,
  // viewed back: PyTorch 2.x's at::linear (its graph ends in UnsafeViewBackward0; 1.13 did
  // this for 3-D inputs only). Shape errors are addmm's ("addmm: mat1 and mat2 shapes ...").
  if (input.dim() == 2 && bias.defined()) return ember::addmm(bias, input, weight.t());
  if (bias.defined() && bias.dim() == 1 && input.is_contiguous()) {
    Shape out_sizes(input.sizes().begin(), input.sizes().end() - 1);
    std::int64_t rows = 1;
    for (std::int64_t size : out_sizes) rows *= size;
    Tensor product = ember::addmm(bias, ember::view(input, {rows, input.size(-1)}), weight.t());
    out_sizes.push_back(product.size(1));
    return ember::unsafe_view(product, out_sizes);
  }
  // Otherwise matmul folds the leading dims into the GEMM's rows (a view when they merge).
  Tensor output = ember::matmul(input, weight.t());
  return bias.defined() ? output + bias : output;
}

Linear::Linear(std::int64_t in_features, std::int64_t out_features, bool with_bias)
    : in_features(in_features), out_features(out_features) {
  EMBER_CHECK(in_features >= 0 && out_features >= 0, ValueError,
              "Linear: in_features and out_features must be non-negative, got ", in_features, " and ",
              out_features);
  weight = register_parameter("weight", ember::empty({out_features, in_features}));
  if (with_bias) bias = register_parameter("bias", ember::empty({out_features}));
  reset_parameters();
}

void Linear::reset_parameters() {
  // a = sqrt(5) makes kaiming's bound gain * sqrt(3 / fan_in) equal to 1 / sqrt(fan_in).
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    const std::int64_t fan_in = init::calculate_fan_in_and_fan_out(weight).first;
    const double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
    init::uniform_(bias, -bound, bound);
  }
}

Tensor Linear::forward(const Tensor& input) { return functional::linear(input, weight, bias); }

Tensor Linear::forward_relu(const Tensor& input) {
  // addmm's output is fresh, addmm saves only its inputs, and nothing else holds it: the
  // ReLU can overwrite it while it is still in cache (autograd/fused_ops.h). Reference mode
  // (core/kernel_mode.h) keeps the two steps apart: addmm, then relu into a new tensor.
  if (input.dim() == 2 && bias.defined() && kernel_mode() == KernelMode::Fast) return ember::relu_of_fresh(forward(input));
  return ember::relu(forward(input));
}

std::string Linear::extra_repr() const {
  return make_message("in_features=", in_features, ", out_features=", out_features,
                      ", bias=", bias.defined() ? "True" : "False");
}

}  // namespace ember::nn
