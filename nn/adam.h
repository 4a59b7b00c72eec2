// nn/adam.h — optim::Adam and optim::AdamW (PyTorch: torch.optim.Adam / AdamW).
//
// Adam keeps, per parameter, running averages of the gradient (exp_avg, m) and of its
// square (exp_avg_sq, v), and a step count t. PyTorch's update, exactly:
//   g = grad (+ weight_decay * p for Adam; AdamW, or Adam with decoupled_weight_decay,
//            instead shrinks p *= 1 - lr * weight_decay)
//   m = beta1 * m + (1 - beta1) * g
//   v = beta2 * v + (1 - beta2) * g * g
//   p = p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
// Note where eps sits: added *after* the bias-corrected square root, as PyTorch does.
// AdamW's "decoupled" weight decay does not pass through m and v, which is its point.
// Usage: ember::optim::AdamW optimizer(model->parameters(), {.lr = 1e-3});  // decays by 1e-2
// Groups (nn/optimizer.h's ParamGroup), e.g. no decay for biases and norms:
//   AdamW optimizer({{.params = matrices}, {.params = vectors, .weight_decay = 0.0}}, {.lr = 6e-4});
#pragma once

#include <optional>

#include <ember/nn/optimizer.h>

namespace ember::optim {

struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  // Unset means the optimizer's own default, as in PyTorch: 0 for Adam, 1e-2 for AdamW.
  // So AdamW(params, {.lr = 1e-3}) decays like torch.optim.AdamW(params, lr=1e-3), and
  // {.weight_decay = 0.0} turns the decay off explicitly. options() always has it set.
  std::optional<double> weight_decay = std::nullopt;
  bool amsgrad = false;  // use the running maximum of v (max_exp_avg_sq) in the denominator
  bool maximize = false;
  // AdamW's decay (PyTorch 2.x's Adam option of the same name; AdamW always sets it).
  bool decoupled_weight_decay = false;
};

class Adam : public Optimizer {
 public:
  static constexpr double kDefaultWeightDecay = 0.0;

  Adam(std::vector<Tensor> parameters, AdamOptions options);
  // Several groups: each group's unset fields come from `defaults` (weight_decay: from
  // defaults.weight_decay, else the class's default). Each group's values are checked.
  Adam(std::vector<ParamGroup> groups, AdamOptions defaults);
  void step() override;
  double group_learning_rate(std::size_t group) const override { return groups_[checked_group(group)].lr; }
  void set_group_learning_rate(std::size_t group, double lr) override { groups_[checked_group(group)].lr = lr; }
  std::string name() const override { return decoupled_weight_decay_ ? "AdamW" : "Adam"; }
  // beta1, as PyTorch's OneCycleLR cycles group["betas"][0].
  bool has_momentum() const override { return true; }
  bool uses_betas() const override { return true; }
  double group_momentum(std::size_t group) const override { return groups_[checked_group(group)].beta1; }
  void set_group_momentum(std::size_t group, double beta1) override { groups_[checked_group(group)].beta1 = beta1; }
  // The options a group uses, weight_decay resolved to a value (group 0: the only one of
  // a single-list optimizer).
  const AdamOptions& options(std::size_t group = 0) const { return groups_[checked_group(group)]; }

 protected:
  // decoupled = true is AdamW (every group decays decoupled); an unset weight_decay becomes
  // `default_weight_decay`.
  Adam(std::vector<ParamGroup> groups, AdamOptions defaults, bool decoupled, double default_weight_decay);

  std::vector<StateSlot> state_slots(std::size_t group) const override;
  StateDict hyperparameters(std::size_t group) const override;
  void load_hyperparameters(std::size_t group, GroupReader& reader) override;

 private:
  // One parameter's update with its group's options (the tensor ops PyTorch's single-tensor
  // Adam runs, in its order).
  void update(const AdamOptions& options, std::size_t index);

  std::vector<AdamOptions> groups_;  // one per parameter group, all fields resolved
  bool decoupled_weight_decay_ = false;  // the class is AdamW
};

class AdamW : public Adam {
 public:
  static constexpr double kDefaultWeightDecay = 1e-2;

  AdamW(std::vector<Tensor> parameters, AdamOptions options);
  AdamW(std::vector<ParamGroup> groups, AdamOptions defaults);
  // PyTorch's AdamW defaults (weight_decay = 1e-2 set explicitly).
  static AdamOptions default_options() {
    AdamOptions options;
    options.weight_decay = kDefaultWeightDecay;
    return options;
  }
};

}  // namespace ember::optim
