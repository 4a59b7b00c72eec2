// nn/sgd.h — optim::SGD: stochastic gradient descent with optional momentum.
//
// Tutorial §7: optimizer = torch.optim.SGD(model.parameters(), lr=0.5); "for SGD, this
// means multiplying the gradient with the learning rate and adding the scaled negative
// gradient to the parameters." PyTorch's update, exactly:
//   g = grad + weight_decay * p
//   if momentum:  buf = g (first step)  or  buf = momentum * buf + (1 - dampening) * g
//                 g = g + momentum * buf (nesterov)  or  g = buf
//   p = p - lr * g
// Each step is one fused pass per parameter (SGDOptions::fused, core/fused_plans.h), except
// in reference mode (core/kernel_mode.h), where it is the composite tensor ops.
// SGDOptions (core/sgd_options.h) is the one hyper-parameter object: validated here, held
// as the param_group, embedded in the fused kernel's plan.
// Usage: ember::optim::SGD optimizer(model->parameters(), {.lr = 0.5});
#pragma once

#include <ember/core/sgd_options.h>
#include <ember/nn/optimizer.h>

namespace ember::optim {

class SGD : public Optimizer {
 public:
  // Checks the options with PyTorch's messages ("Invalid learning rate: -1.0").
  SGD(std::vector<Tensor> parameters, SGDOptions options);
  void step() override;
  double learning_rate() const override { return options_.lr; }
  void set_learning_rate(double lr) override { options_.lr = lr; }
  std::string name() const override { return "SGD"; }
  bool has_momentum() const override { return true; }  // PyTorch: "momentum" in SGD's defaults, even 0
  double momentum() const override { return options_.momentum; }
  void set_momentum(double momentum) override { options_.momentum = momentum; }
  const SGDOptions& options() const { return options_; }

 protected:
  // momentum_buffer, only with momentum (PyTorch keeps None without it).
  std::vector<StateSlot> state_slots() const override;
  StateDict hyperparameters() const override;
  void load_hyperparameters(GroupReader& group) override;

 private:
  // The update as separate elementwise ops (the fused kernel's reference).
  void composite_update(std::size_t index, const Tensor& parameter);
  bool fused_update(std::size_t index, const Tensor& parameter);  // false: not fusable here

  SGDOptions options_;
};

}  // namespace ember::optim
