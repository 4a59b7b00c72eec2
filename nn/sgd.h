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
// Groups: SGD optimizer({{.params = body}, {.params = head, .lr = 0.01, .momentum = 0.5}},
//                       {.lr = 0.1, .momentum = 0.9});   // each group keeps its own SGDOptions
#pragma once

#include <ember/core/sgd_options.h>
#include <ember/nn/optimizer.h>

namespace ember::optim {

class SGD : public Optimizer {
 public:
  // One group. Checks the options with PyTorch's messages ("Invalid learning rate: -1.0").
  SGD(std::vector<Tensor> parameters, SGDOptions options);
  // Several groups: each group's unset fields come from `defaults` (fused too: it is not a
  // group setting). Every group's resolved options are checked like the constructor's.
  SGD(std::vector<ParamGroup> groups, SGDOptions defaults);
  void step() override;
  double group_learning_rate(std::size_t group) const override { return groups_[checked_group(group)].lr; }
  void set_group_learning_rate(std::size_t group, double lr) override { groups_[checked_group(group)].lr = lr; }
  std::string name() const override { return "SGD"; }
  bool has_momentum() const override { return true; }  // PyTorch: "momentum" in SGD's defaults, even 0
  double group_momentum(std::size_t group) const override { return groups_[checked_group(group)].momentum; }
  void set_group_momentum(std::size_t group, double momentum) override { groups_[checked_group(group)].momentum = momentum; }
  // The options in use by a group (group 0: the only one of a single-list SGD).
  const SGDOptions& options(std::size_t group = 0) const { return groups_[checked_group(group)]; }

 protected:
  // momentum_buffer, only with momentum (PyTorch keeps None without it).
  std::vector<StateSlot> state_slots(std::size_t group) const override;
  StateDict hyperparameters(std::size_t group) const override;
  void load_hyperparameters(std::size_t group, GroupReader& reader) override;

 private:
  // The update as separate elementwise ops (the fused kernel's reference).
  void composite_update(const SGDOptions& options, std::size_t index, const Tensor& parameter);
  // false: not fusable here
  bool fused_update(const SGDOptions& options, std::size_t index, const Tensor& parameter);

  std::vector<SGDOptions> groups_;  // one per parameter group, all fields resolved
};

}  // namespace ember::optim
