// nn/conv.cpp — nn::Conv2d (see conv.h).
#include <ember/nn/conv.h>

#include <cmath>

#include <ember/autograd/fused_ops.h>
#include <ember/autograd/ops.h>
#include <ember/core/factories.h>
#include <ember/core/kernel_mode.h>
#include <ember/nn/init.h>

namespace ember::nn {

namespace {

// One value per dim, refusing a list of the wrong length as torch.nn.Conv2d's _pair would
// leave it to the op to do.
std::array<std::int64_t, 2> pair_of(const ExpandingArray<2>& value, const char* name) {
  EMBER_CHECK(value.valid(), ValueError, "Conv2d: ", name, " must be a single int or a tuple of two ints");
  return value.expanded();
}

std::string tuple_string(const std::array<std::int64_t, 2>& v) { return make_message("(", v[0], ", ", v[1], ")"); }

}  // namespace

Conv2d::Conv2d(std::int64_t in_channels, std::int64_t out_channels, const ExpandingArray<2>& kernel,
               const Conv2dOptions& options)
    : in_channels(in_channels),
      out_channels(out_channels),
      kernel_size(pair_of(kernel, "kernel_size")),
      stride(pair_of(options.stride, "stride")),
      padding(pair_of(options.padding, "padding")),
      dilation(pair_of(options.dilation, "dilation")),
      groups(options.groups) {
  // torch.nn.Conv2d's checks, its words.
  EMBER_CHECK(groups > 0, ValueError, "groups must be a positive integer");
  EMBER_CHECK(in_channels % groups == 0, ValueError, "in_channels must be divisible by groups");
  EMBER_CHECK(out_channels % groups == 0, ValueError, "out_channels must be divisible by groups");
  weight = register_parameter("weight", ember::empty({out_channels, in_channels / groups, kernel_size[0], kernel_size[1]}));
  if (options.bias) bias = register_parameter("bias", ember::empty({out_channels}));
  reset_parameters();
}

void Conv2d::reset_parameters() {
  // As nn::Linear: a = sqrt(5) makes kaiming's bound 1 / sqrt(fan_in).
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    const std::int64_t fan_in = init::calculate_fan_in_and_fan_out(weight).first;
    const double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
    init::uniform_(bias, -bound, bound);
  }
}

Tensor Conv2d::forward(const Tensor& input) {
  return ember::conv2d(input, weight, bias, stride, padding, dilation, groups);
}

Tensor Conv2d::forward_relu(const Tensor& input) {
  // The convolution's output is fresh and ConvolutionBackward0 saves only the input and the
  // weight, so the ReLU may overwrite it in place (autograd/fused_ops.h): one tensor and one
  // pass over memory fewer. Reference mode keeps the two steps apart.
  if (kernel_mode() == KernelMode::Fast) return ember::relu_of_fresh(forward(input));
  return ember::relu(forward(input));
}

std::string Conv2d::extra_repr() const {
  // torch.nn.Conv2d's extra_repr: padding, dilation, groups and bias only when not the default.
  std::string repr = make_message(in_channels, ", ", out_channels, ", kernel_size=", tuple_string(kernel_size),
                                  ", stride=", tuple_string(stride));
  if (padding != std::array<std::int64_t, 2>{0, 0}) repr += ", padding=" + tuple_string(padding);
  if (dilation != std::array<std::int64_t, 2>{1, 1}) repr += ", dilation=" + tuple_string(dilation);
  if (groups != 1) repr += make_message(", groups=", groups);
  if (!bias.defined()) repr += ", bias=False";
  return repr;
}

}  // namespace ember::nn
