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
#pragma once

#include <ember/nn/optimizer.h>

namespace ember::optim {

struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
  bool amsgrad = false;  // use the running maximum of v (max_exp_avg_sq) in the denominator
  bool maximize = false;
};

class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> parameters, AdamOptions options);
  void step() override;
  double learning_rate() const override { return options_.lr; }
  void set_learning_rate(double lr) override { options_.lr = lr; }
  const AdamOptions& options() const { return options_; }

 protected:
  // decoupled = true is AdamW.
  Adam(std::vector<Tensor> parameters, AdamOptions options, bool decoupled);

 private:
  AdamOptions options_;
  bool decoupled_weight_decay_ = false;
};

// AdamW's default weight_decay is 1e-2 (Adam's is 0): give it explicitly in the options
// or use AdamW::default_options().
class AdamW : public Adam {
 public:
  AdamW(std::vector<Tensor> parameters, AdamOptions options);
  static AdamOptions default_options() {
    AdamOptions options;
    options.weight_decay = 1e-2;
    return options;
  }
};

}  // namespace ember::optim
