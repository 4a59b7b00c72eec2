// nn/pooling.cpp — MaxPool2d, AvgPool2d, AdaptiveAvgPool2d (see pooling.h).
#include <ember/nn/pooling.h>

#include <ember/autograd/ops.h>

namespace ember::nn {

namespace {

// How Python prints the argument as given: 2 -> "2", (2, 3) -> "(2, 3)".
std::string python_value(const ExpandingArray<2>& value) {
  const auto& given = value.given();
  if (given.size() == 1) return make_message(given[0]);
  std::string out = "(";
  for (std::size_t i = 0; i < given.size(); ++i) out += make_message(i ? ", " : "", given[i]);
  return out + ")";
}

const char* python_bool(bool value) { return value ? "True" : "False"; }

}  // namespace

MaxPool2d::MaxPool2d(const ExpandingArray<2>& kernel_size, const MaxPool2dOptions& options)
    : kernel_size(kernel_size),
      stride(options.stride.empty() ? kernel_size : options.stride),
      padding(options.padding),
      dilation(options.dilation),
      ceil_mode(options.ceil_mode) {}

Tensor MaxPool2d::forward(const Tensor& input) {
  return ember::max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode);
}

std::string MaxPool2d::extra_repr() const {
  return make_message("kernel_size=", python_value(kernel_size), ", stride=", python_value(stride),
                      ", padding=", python_value(padding), ", dilation=", python_value(dilation),
                      ", ceil_mode=", python_bool(ceil_mode));
}

AvgPool2d::AvgPool2d(const ExpandingArray<2>& kernel_size, const AvgPool2dOptions& options)
    : kernel_size(kernel_size),
      stride(options.stride.empty() ? kernel_size : options.stride),
      padding(options.padding),
      ceil_mode(options.ceil_mode),
      count_include_pad(options.count_include_pad),
      divisor_override(options.divisor_override) {}

Tensor AvgPool2d::forward(const Tensor& input) {
  return ember::avg_pool2d(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
}

std::string AvgPool2d::extra_repr() const {
  return make_message("kernel_size=", python_value(kernel_size), ", stride=", python_value(stride),
                      ", padding=", python_value(padding));
}

AdaptiveAvgPool2d::AdaptiveAvgPool2d(const ExpandingArray<2>& output_size) : output_size(output_size) {}

Tensor AdaptiveAvgPool2d::forward(const Tensor& input) { return ember::adaptive_avg_pool2d(input, output_size); }

std::string AdaptiveAvgPool2d::extra_repr() const { return "output_size=" + python_value(output_size); }

}  // namespace ember::nn
