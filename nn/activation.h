// nn/activation.h — activation layers: ReLU, Sigmoid, Tanh, GELU, SiLU (PyTorch: torch.nn.ReLU, ...).
//
// Tutorial §5 puts torch.nn.ReLU() between the Linear layers of the NeuralNetwork. These
// modules hold no parameters; each forwards to the op of the same name, and prints as
// "ReLU()" in the model summary.
#pragma once

#include <string>

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

// GELU(approximate="none"): x·Φ(x); "tanh" for the tanh approximation (GPT-2's). Prints as
// PyTorch's: "GELU(approximate='none')".
class GELU : public Module {
 public:
  explicit GELU(std::string approximate = "none");
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;
  const std::string& approximate() const { return approximate_; }

 private:
  std::string approximate_;
};

// SiLU (swish): x·σ(x).
class SiLU : public Module {
 public:
  Tensor forward(const Tensor& input) override;
};

}  // namespace ember::nn
