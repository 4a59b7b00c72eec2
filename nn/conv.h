// nn/conv.h — nn::Conv2d: a 2-D convolution layer (PyTorch's torch.nn.Conv2d).
//
// Issue 19. weight is [out_channels, in_channels / groups, kH, kW], bias [out_channels];
// forward is ember::conv2d (autograd/conv_ops.cpp: im2col + GEMM on the CPU). Initialised
// as PyTorch's reset_parameters does, drawing in the same order (weight, then bias):
// kaiming_uniform_(weight, a = sqrt(5)) and bias ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with
// fan_in = in_channels / groups * kH * kW, so manual_seed(s) gives PyTorch's weights.
//
//   auto conv = std::make_shared<nn::Conv2d>(1, 32, 3, nn::Conv2dOptions{.padding = 1});
//   std::cout << *conv;  // Conv2d(1, 32, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))
#pragma once

#include <array>
#include <cstdint>

#include <ember/core/expanding_array.h>
#include <ember/nn/module.h>

namespace ember::nn {

// The keyword arguments of torch.nn.Conv2d (padding_mode is always "zeros").
struct Conv2dOptions {
  ExpandingArray<2> stride = 1;
  ExpandingArray<2> padding = 0;
  ExpandingArray<2> dilation = 1;
  std::int64_t groups = 1;
  bool bias = true;
};

class Conv2d : public Module {
 public:
  Conv2d(std::int64_t in_channels, std::int64_t out_channels, const ExpandingArray<2>& kernel_size,
         const Conv2dOptions& options = {});

  Tensor forward(const Tensor& input) override;
  // relu(forward(input)) with the ReLU written over the convolution's fresh output (as
  // Linear::forward_relu; nn::Sequential calls it for a Conv2d followed by a ReLU).
  Tensor forward_relu(const Tensor& input);
  std::string extra_repr() const override;
  void reset_parameters();

  std::int64_t in_channels;
  std::int64_t out_channels;
  std::array<std::int64_t, 2> kernel_size;
  std::array<std::int64_t, 2> stride;
  std::array<std::int64_t, 2> padding;
  std::array<std::int64_t, 2> dilation;
  std::int64_t groups;
  Parameter weight;
  Parameter bias;  // undefined when options.bias is false
};

}  // namespace ember::nn
