// nn/adam.cpp — optim::Adam and optim::AdamW (see adam.h).
#include <ember/nn/adam.h>

#include <cmath>
#include <tuple>

#include <ember/autograd/grad_mode.h>
#include <ember/autograd/ops.h>
#include <ember/nn/python_format.h>
#include <ember/core/adam_step.h>
#include <ember/core/factories.h>
#include <ember/core/profiler.h>

namespace ember::optim {

namespace {

// The constructor's checks, with PyTorch's messages (also applied to loaded hyper-parameters).
void check_options(const AdamOptions& options) {
  EMBER_CHECK(options.lr >= 0.0, ValueError, "Invalid learning rate: ", nn::python_float(options.lr));
  EMBER_CHECK(options.eps >= 0.0, ValueError, "Invalid epsilon value: ", nn::python_float(options.eps));
  EMBER_CHECK(options.beta1 >= 0.0 && options.beta1 < 1.0, ValueError, "Invalid beta parameter at index 0: ",
              nn::python_float(options.beta1));
  EMBER_CHECK(options.beta2 >= 0.0 && options.beta2 < 1.0, ValueError, "Invalid beta parameter at index 1: ",
              nn::python_float(options.beta2));
  EMBER_CHECK(*options.weight_decay >= 0.0, ValueError, "Invalid weight_decay value: ",
              nn::python_float(*options.weight_decay));
}

}  // namespace

Adam::Adam(std::vector<Tensor> parameters, AdamOptions options)
    : Adam(one_group(std::move(parameters)), options, false, kDefaultWeightDecay) {}

Adam::Adam(std::vector<ParamGroup> groups, AdamOptions defaults)
    : Adam(std::move(groups), defaults, false, kDefaultWeightDecay) {}

Adam::Adam(std::vector<ParamGroup> groups, AdamOptions defaults, bool decoupled, double default_weight_decay)
    : Optimizer(groups), decoupled_weight_decay_(decoupled) {
  if (!defaults.weight_decay) defaults.weight_decay = default_weight_decay;
  if (decoupled) defaults.decoupled_weight_decay = true;
  check_options(defaults);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const ParamGroup& group = groups[g];
    refuse_foreign_fields(g, {{"momentum", group.momentum.has_value()},
                              {"dampening", group.dampening.has_value()},
                              {"nesterov", group.nesterov.has_value()}});
    AdamOptions options = defaults;
    options.lr = group.lr.value_or(defaults.lr);
    options.beta1 = group.beta1.value_or(defaults.beta1);
    options.beta2 = group.beta2.value_or(defaults.beta2);
    options.eps = group.eps.value_or(defaults.eps);
    options.weight_decay = group.weight_decay.value_or(*defaults.weight_decay);
    options.amsgrad = group.amsgrad.value_or(defaults.amsgrad);
    options.maximize = group.maximize.value_or(defaults.maximize);
    check_options(options);
    groups_.push_back(options);
  }
}

std::vector<Optimizer::StateSlot> Adam::state_slots(std::size_t group) const {
  std::vector<StateSlot> slots{{"step", true}, {"exp_avg", false}, {"exp_avg_sq", false}};
  if (groups_[group].amsgrad) slots.push_back({"max_exp_avg_sq", false});
  return slots;
}

StateDict Adam::hyperparameters(std::size_t group_index) const {
  // PyTorch's param_groups entries (without foreach/capturable/differentiable/fused,
  // which select PyTorch implementations ember does not have).
  const AdamOptions& options = groups_[group_index];
  StateDict group;
  group.insert("lr", hyperparameter_tensor(options.lr));
  group.insert("betas", hyperparameter_tensor(options.beta1, options.beta2));
  group.insert("eps", hyperparameter_tensor(options.eps));
  group.insert("weight_decay", hyperparameter_tensor(*options.weight_decay));
  group.insert("amsgrad", hyperparameter_tensor(options.amsgrad));
  group.insert("maximize", hyperparameter_tensor(options.maximize));
  group.insert("decoupled_weight_decay", hyperparameter_tensor(options.decoupled_weight_decay));
  return group;
}

void Adam::load_hyperparameters(std::size_t group_index, GroupReader& group) {
  AdamOptions loaded;
  loaded.lr = group.number("lr");
  std::tie(loaded.beta1, loaded.beta2) = group.pair("betas");
  loaded.eps = group.number("eps");
  loaded.weight_decay = group.number("weight_decay");
  loaded.amsgrad = group.flag("amsgrad");
  loaded.maximize = group.flag("maximize");
  // Saved by PyTorch 2.x (an AdamW group loaded into Adam decays decoupled, as there);
  // files from PyTorch 1.13 and older ember lack it and keep this optimizer's own.
  loaded.decoupled_weight_decay = group.flag_or("decoupled_weight_decay", groups_[group_index].decoupled_weight_decay);
  if (group.accept(loaded, check_options)) groups_[group_index] = loaded;
}

void Adam::step() {
  const profiler::RecordScope scope(profiler::EventKind::Annotation, "Optimizer.step#Adam.step");
  NoGradGuard no_grad;
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    const AdamOptions& options = groups_[g];
    for (std::size_t i = group_starts_[g]; i < group_starts_[g + 1]; ++i) update(options, i);
  }
}

void Adam::update(const AdamOptions& o, std::size_t i) {
  const double weight_decay = *o.weight_decay;
  Tensor parameter = parameters_[i];
  if (!parameter.grad().defined()) return;

  auto& state = state_of(i);
  if (!state.contains("step")) {
    // Lazy state creation on the first step, as PyTorch (step is a 0-d float tensor).
    state.insert("step", ember::zeros({}, kFloat32));
    state.insert("exp_avg", ember::zeros_like(parameter));
    state.insert("exp_avg_sq", ember::zeros_like(parameter));
  }
  // load_state_dict guarantees it for stepped parameters; created here for fresh ones.
  if (o.amsgrad && !state.contains("max_exp_avg_sq")) state.insert("max_exp_avg_sq", ember::zeros_like(parameter));
  Tensor& step_count = state.at("step");
  Tensor& exp_avg = state.at("exp_avg");
  Tensor& exp_avg_sq = state.at("exp_avg_sq");

  step_count.add_(1);
  // A contiguous float32/float64 CPU parameter: one pass with PyTorch's roundings
  // (core/adam_step.h); otherwise the same update as tensor ops, below.
  native::AdamStepOptions step_options{.lr = o.lr, .beta1 = o.beta1, .beta2 = o.beta2, .eps = o.eps,
                                       .weight_decay = weight_decay, .amsgrad = o.amsgrad, .maximize = o.maximize,
                                       .decoupled_weight_decay = o.decoupled_weight_decay,
                                       .step = step_count.item<double>()};
  if (native::adam_step_(parameter, parameter.grad(), exp_avg, exp_avg_sq,
                         o.amsgrad ? state.at("max_exp_avg_sq") : Tensor(), step_options))
    return;
  Tensor gradient = o.maximize ? -parameter.grad() : parameter.grad();
  if (weight_decay != 0.0) {
    if (o.decoupled_weight_decay) {
      parameter.mul_(1.0 - o.lr * weight_decay);  // AdamW: decay the weights directly
    } else {
      gradient = gradient.add(parameter, weight_decay);  // Adam: L2 term in the gradient
    }
  }
  exp_avg.mul_(o.beta1).add_(gradient, 1.0 - o.beta1);
  exp_avg_sq.mul_(o.beta2).add_(gradient * gradient, 1.0 - o.beta2);

  const double step = step_options.step;
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

AdamW::AdamW(std::vector<Tensor> parameters, AdamOptions options)
    : Adam(one_group(std::move(parameters)), options, true, kDefaultWeightDecay) {}

AdamW::AdamW(std::vector<ParamGroup> groups, AdamOptions defaults)
    : Adam(std::move(groups), defaults, true, kDefaultWeightDecay) {}

}  // namespace ember::optim
