// nn/dropout.h — nn::Dropout: zeroes elements at random while training.
//
// Tutorial §7: "model.train() and model.eval() ... are necessary for components that
// behave differently during training and inference, such as dropout". In training mode
// each element is kept with probability 1 - p and scaled by 1 / (1 - p), so the expected
// output equals the input; in eval mode the layer is the identity. The mask is drawn as
// PyTorch draws it: an empty tensor like the input, bernoulli_(1 - p), divided by 1 - p.
#pragma once

#include <ember/nn/module.h>

namespace ember::nn {

class Dropout : public Module {
 public:
  explicit Dropout(double p = 0.5);
  Tensor forward(const Tensor& input) override;
  std::string extra_repr() const override;

  double p;
};

}  // namespace ember::nn
