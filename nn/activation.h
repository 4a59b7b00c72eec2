// nn/activation.h — activation layers: ReLU, Sigmoid, Tanh (PyTorch: torch.nn.ReLU, ...).
//
// Tutorial §5 puts torch.nn.ReLU() between the Linear layers of the NeuralNetwork. These
// modules hold no parameters; each forwards to the op of the same name, and prints as
// "ReLU()" in the model summary.
#pragma once

#include <ember/nn/module.h>

namespace ember::nn {

class ReLU : public Module {
 public:
  Tensor forward(const Tensor& input) override;
};

class Sigmoid : public Module {
 public:
  Tensor forward(const Tensor& input) override;
};

class Tanh : public Module {
 public:
  Tensor forward(const Tensor& input) override;
};

}  // namespace ember::nn
