// nn/adam.h — optim::Adam and optim::AdamW (PyTorch: torch.optim.Adam / AdamW).
//
// Adam keeps, per parameter, running averages of the gradient (exp_avg, m) and of its
// square (exp_avg_sq, v), and a step count t. PyTorch's update, exactly:
//   g = grad (+ weight_decay * p for Adam; AdamW instead shrinks p *= 1 - lr * weight_decay)
//   m = beta1 * m + (1 - beta1) * g
//   v = beta2 * v + (1 - beta2) * g * g
//   p = p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
// Note where eps sits: added *after* the bias-corrected square root, as PyTorch does.
// AdamW's "decoupled" weight decay does not pass through m and v, which is its point.
// Usage: ember::optim::AdamW optimizer(model->parameters(), {.lr = 1e-3});  // decays by 1e-2
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
};

class Adam : public Optimizer {
 public:
  static constexpr double kDefaultWeightDecay = 0.0;

  Adam(std::vector<Tensor> parameters, AdamOptions options);
  void step() override;
  double learning_rate() const override { return options_.lr; }
  void set_learning_rate(double lr) override { options_.lr = lr; }
  std::string name() const override { return decoupled_weight_decay_ ? "AdamW" : "Adam"; }
  // beta1, as PyTorch's OneCycleLR cycles group["betas"][0].
  bool has_momentum() const override { return true; }
  bool uses_betas() const override { return true; }
  double momentum() const override { return options_.beta1; }
  void set_momentum(double beta1) override { options_.beta1 = beta1; }
  // The options in use (weight_decay resolved to a value).
  const AdamOptions& options() const { return options_; }

 protected:
  // decoupled = true is AdamW; an unset weight_decay becomes `default_weight_decay`.
  Adam(std::vector<Tensor> parameters, AdamOptions options, bool decoupled, double default_weight_decay);

  std::vector<StateSlot> state_slots() const override;
  StateDict hyperparameters() const override;
  void load_hyperparameters(GroupReader& group) override;

 private:
  AdamOptions options_;
  bool decoupled_weight_decay_ = false;
};

class AdamW : public Adam {
 public:
  static constexpr double kDefaultWeightDecay = 1e-2;

  AdamW(std::vector<Tensor> parameters, AdamOptions options);
  // PyTorch's AdamW defaults (weight_decay = 1e-2 set explicitly).
  static AdamOptions default_options() {
    AdamOptions options;
    options.weight_decay = kDefaultWeightDecay;
    return options;
  }
};

}  // namespace ember::optim
