// nn/linear.h — nn::Linear: y = x W^T + b (a fully connected / feed-forward layer).
//
// Tutorial §5: "The linear layer multiplies the inputs with a weight matrix and adds a bias
// vector." weight is [out_features, in_features], bias [out_features]. Initialised as
// PyTorch's reset_parameters does, drawing from the generator in the same order (weight
// first, then bias), so manual_seed(123); NeuralNetwork(50, 3) gives the tutorial's
// weights -0.0577, 0.0047, -0.0702, ...
#pragma once

#include <cstdint>

#include <ember/nn/module.h>

namespace ember::nn {

class Linear : public Module {
 public:
  Linear(std::int64_t in_features, std::int64_t out_features, bool bias = true);

  // For a 2-D input this is one addmm (grad_fn=<AddmmBackward0>, as in the tutorial).
  Tensor forward(const Tensor& input) override;
  // relu(forward(input)) with the bias + ReLU fusion (issue 8): for a 2-D input with a
  // bias, addmm and then one in-place ReLU pass over its fresh output, so the
  // pre-activation is never a tensor of its own. The tape is PyTorch's for Linear then
  // ReLU: TBackward0, AddmmBackward0 (saving mat1, mat2), ReluBackward0 (saving the result).
  // nn::Sequential calls it for a Linear directly followed by a ReLU.
  Tensor forward_relu(const Tensor& input);
  std::string extra_repr() const override;
  // PyTorch's init: kaiming_uniform_(weight, a=sqrt(5)), then bias ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
  void reset_parameters();

  std::int64_t in_features;
  std::int64_t out_features;
  Parameter weight;
  Parameter bias;  // undefined when constructed with bias = false
};

}  // namespace ember::nn
