// nn/shape_layers.h — layers that only reshape or pass data through: Flatten, Identity.
//
// Flatten turns images [N, 1, 28, 28] into rows [N, 784] for a Linear layer (PyTorch's
// torch.nn.Flatten flattens dims start_dim=1 .. end_dim=-1, keeping the batch dim).
// Identity returns its input: a placeholder when a model wants "no layer here".
#pragma once

#include <cstdint>

#include <ember/nn/module.h>

namespace ember::nn {

class Flatten : public Module {
 public:
  explicit Flatten(std::int64_t start_dim = 1, std::int64_t end_dim = -1);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

  std::int64_t start_dim;
  std::int64_t end_dim;
};

class Identity : public Module {
 public:
  Tensor forward(const Tensor& input) override { return input; }
};

}  // namespace ember::nn
