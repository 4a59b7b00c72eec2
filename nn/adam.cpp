// nn/adam.cpp — optim::Adam and optim::AdamW (see adam.h).
#include <ember/nn/adam.h>

#include <cmath>

#include <ember/autograd/grad_mode.h>
#include <ember/autograd/ops.h>
#include <ember/nn/python_format.h>
#include <ember/core/factories.h>

namespace ember::optim {

Adam::Adam(std::vector<Tensor> parameters, AdamOptions options) : Adam(std::move(parameters), options, false) {}

Adam::Adam(std::vector<Tensor> parameters, AdamOptions options, bool decoupled)
    : Optimizer(std::move(parameters)), options_(options), decoupled_weight_decay_(decoupled) {
  EMBER_CHECK(options.lr >= 0.0, ValueError, "Invalid learning rate: ", nn::python_float(options.lr));
  EMBER_CHECK(options.eps >= 0.0, ValueError, "Invalid epsilon value: ", nn::python_float(options.eps));
  EMBER_CHECK(options.beta1 >= 0.0 && options.beta1 < 1.0, ValueError, "Invalid beta parameter at index 0: ",
              nn::python_float(options.beta1));
  EMBER_CHECK(options.beta2 >= 0.0 && options.beta2 < 1.0, ValueError, "Invalid beta parameter at index 1: ",
              nn::python_float(options.beta2));
  EMBER_CHECK(options.weight_decay >= 0.0, ValueError, "Invalid weight_decay value: ", nn::python_float(options.weight_decay));
}

void Adam::step() {
  NoGradGuard no_grad;
  const AdamOptions& o = options_;
  for (std::size_t i = 0; i < parameters_.size(); ++i) {
    Tensor parameter = parameters_[i];
    if (!parameter.grad().defined()) continue;
    Tensor gradient = o.maximize ? -parameter.grad() : parameter.grad();

    auto& state = state_of(i);
    if (!state.contains("step")) {
      // Lazy state creation on the first step, as PyTorch (step is a 0-d float tensor).
      state.insert("step", ember::zeros({}, kFloat32));
      state.insert("exp_avg", ember::zeros_like(parameter));
      state.insert("exp_avg_sq", ember::zeros_like(parameter));
      if (o.amsgrad) state.insert("max_exp_avg_sq", ember::zeros_like(parameter));
    }
    Tensor& step_count = state.at("step");
    Tensor& exp_avg = state.at("exp_avg");
    Tensor& exp_avg_sq = state.at("exp_avg_sq");

    step_count.add_(1);
    if (o.weight_decay != 0.0) {
      if (decoupled_weight_decay_) {
        parameter.mul_(1.0 - o.lr * o.weight_decay);  // AdamW: decay the weights directly
      } else {
        gradient = gradient.add(parameter, o.weight_decay);  // Adam: L2 term in the gradient
      }
    }
    exp_avg.mul_(o.beta1).add_(gradient, 1.0 - o.beta1);
    exp_avg_sq.mul_(o.beta2).add_(gradient * gradient, 1.0 - o.beta2);

    const double step = step_count.item<double>();
    const double bias_correction1 = 1.0 - std::pow(o.beta1, step);
    const double bias_correction2 = 1.0 - std::pow(o.beta2, step);
    const double step_size = o.lr / bias_correction1;
    const double bias_correction2_sqrt = std::sqrt(bias_correction2);

    Tensor second_moment = exp_avg_sq;
    if (o.amsgrad) {
      Tensor& max_exp_avg_sq = state.at("max_exp_avg_sq");
      max_exp_avg_sq.copy_(ember::maximum(max_exp_avg_sq, exp_avg_sq));
      second_moment = max_exp_avg_sq;
    }
    Tensor denominator = (second_moment.sqrt() / bias_correction2_sqrt).add_(o.eps);
    parameter.add_(exp_avg / denominator, -step_size);
  }
}

AdamW::AdamW(std::vector<Tensor> parameters, AdamOptions options) : Adam(std::move(parameters), options, true) {}

}  // namespace ember::optim
