// nn/pooling.h — pooling layers: MaxPool2d, AvgPool2d, AdaptiveAvgPool2d (torch.nn's).
//
// Issue 19. Each keeps its arguments as written (one int or a pair) so that it prints as
// PyTorch prints it — MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1,
// ceil_mode=False) — and forwards to ember::max_pool2d / avg_pool2d / adaptive_avg_pool2d
// (autograd/pool_ops.cpp). A stride left out ({}) is the kernel size, as in PyTorch.
#pragma once

#include <cstdint>
#include <optional>

#include <ember/core/expanding_array.h>
#include <ember/nn/module.h>

namespace ember::nn {

struct MaxPool2dOptions {
  ExpandingArray<2> stride = {};  // {}: kernel_size
  ExpandingArray<2> padding = 0;
  ExpandingArray<2> dilation = 1;
  bool ceil_mode = false;
};

class MaxPool2d : public Module {
 public:
  explicit MaxPool2d(const ExpandingArray<2>& kernel_size, const MaxPool2dOptions& options = {});
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

  ExpandingArray<2> kernel_size, stride, padding, dilation;
  bool ceil_mode;
};

struct AvgPool2dOptions {
  ExpandingArray<2> stride = {};  // {}: kernel_size
  ExpandingArray<2> padding = 0;
  bool ceil_mode = false;
  bool count_include_pad = true;
  std::optional<std::int64_t> divisor_override;
};

class AvgPool2d : public Module {
 public:
  explicit AvgPool2d(const ExpandingArray<2>& kernel_size, const AvgPool2dOptions& options = {});
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

  ExpandingArray<2> kernel_size, stride, padding;
  bool ceil_mode, count_include_pad;
  std::optional<std::int64_t> divisor_override;
};

class AdaptiveAvgPool2d : public Module {
 public:
  explicit AdaptiveAvgPool2d(const ExpandingArray<2>& output_size);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

  ExpandingArray<2> output_size;
};

}  // namespace ember::nn
