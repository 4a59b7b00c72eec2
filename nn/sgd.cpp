// nn/sgd.cpp — optim::SGD (see sgd.h): one fused native::sgd_step_ per parameter, or the
// composite elementwise ops (SGDOptions::fused = false, layouts the fused step does not take,
// and reference mode, core/kernel_mode.h: there the update is the plain tensor ops below).
#include <ember/nn/sgd.h>

#include <ember/autograd/grad_mode.h>
#include <ember/autograd/ops.h>
#include <ember/core/kernel_mode.h>
#include <ember/core/native.h>
#include <ember/nn/python_format.h>
#include <ember/core/profiler.h>

namespace ember::optim {

namespace {

// The one validation of the hyper-parameters, with PyTorch's messages: in the constructor,
// and on hyper-parameters loaded from a state_dict. Nothing downstream re-checks them.
void check_options(const SGDOptions& options) {
  EMBER_CHECK(options.lr >= 0.0, ValueError, "Invalid learning rate: ", nn::python_float(options.lr));
  EMBER_CHECK(options.momentum >= 0.0, ValueError, "Invalid momentum value: ", nn::python_float(options.momentum));
  EMBER_CHECK(options.weight_decay >= 0.0, ValueError, "Invalid weight_decay value: ", nn::python_float(options.weight_decay));
  EMBER_CHECK(!options.nesterov || (options.momentum > 0.0 && options.dampening == 0.0), ValueError,
              "Nesterov momentum requires a momentum and zero dampening");
}

}  // namespace

SGD::SGD(std::vector<Tensor> parameters, SGDOptions options) : SGD(one_group(std::move(parameters)), options) {}

SGD::SGD(std::vector<ParamGroup> groups, SGDOptions defaults) : Optimizer(groups) {
  check_options(defaults);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const ParamGroup& group = groups[g];
    refuse_foreign_fields(g, {{"beta1", group.beta1.has_value()},
                              {"beta2", group.beta2.has_value()},
                              {"eps", group.eps.has_value()},
                              {"amsgrad", group.amsgrad.has_value()}});
    SGDOptions options = defaults;
    options.lr = group.lr.value_or(defaults.lr);
    options.momentum = group.momentum.value_or(defaults.momentum);
    options.dampening = group.dampening.value_or(defaults.dampening);
    options.weight_decay = group.weight_decay.value_or(defaults.weight_decay);
    options.nesterov = group.nesterov.value_or(defaults.nesterov);
    options.maximize = group.maximize.value_or(defaults.maximize);
    check_options(options);
    groups_.push_back(options);
  }
}

std::vector<Optimizer::StateSlot> SGD::state_slots(std::size_t group) const {
  if (groups_[group].momentum == 0.0) return {};
  return {{"momentum_buffer", false}};
}

StateDict SGD::hyperparameters(std::size_t group_index) const {
  const SGDOptions& options = groups_[group_index];
  // PyTorch's param_groups entries (without foreach/differentiable, which select PyTorch
  // implementations ember does not have).
  StateDict group;
  group.insert("lr", hyperparameter_tensor(options.lr));
  group.insert("momentum", hyperparameter_tensor(options.momentum));
  group.insert("dampening", hyperparameter_tensor(options.dampening));
  group.insert("weight_decay", hyperparameter_tensor(options.weight_decay));
  group.insert("nesterov", hyperparameter_tensor(options.nesterov));
  group.insert("maximize", hyperparameter_tensor(options.maximize));
  return group;
}

void SGD::load_hyperparameters(std::size_t group_index, GroupReader& group) {
  SGDOptions loaded = groups_[group_index];  // keeps fused, which is not a param_group entry
  loaded.lr = group.number("lr");
  loaded.momentum = group.number("momentum");
  loaded.dampening = group.number("dampening");
  loaded.weight_decay = group.number("weight_decay");
  loaded.nesterov = group.flag("nesterov");
  loaded.maximize = group.flag("maximize");
  if (group.accept(loaded, check_options)) groups_[group_index] = loaded;
}

void SGD::step() {
  const profiler::RecordScope scope(profiler::EventKind::Annotation, "Optimizer.step#SGD.step");
  // The update itself must not be recorded on the tape.
  NoGradGuard no_grad;
  // Reference mode runs the composite update, the one a reader can follow op by op.
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    const SGDOptions& options = groups_[g];
    const bool fused = options.fused && kernel_mode() == KernelMode::Fast;
    for (std::size_t i = group_starts_[g]; i < group_starts_[g + 1]; ++i) {
      const Tensor& parameter = parameters_[i];
      if (!parameter.grad().defined()) continue;
      if (fused && fused_update(options, i, parameter)) continue;
      composite_update(options, i, parameter);
    }
  }
}

bool SGD::fused_update(const SGDOptions& options, std::size_t index, const Tensor& parameter) {
  const Tensor& gradient = parameter.grad();
  if (!parameter.is_floating_point() || !parameter.is_contiguous() || gradient.dtype() != parameter.dtype() ||
      gradient.device() != parameter.device() || gradient.sizes() != parameter.sizes()) {
    return false;
  }
  Tensor buffer;
  if (options.momentum != 0.0) {
    auto& state = state_of(index);
    if (Tensor* existing = state.find("momentum_buffer")) {
      // A buffer restored by load_state_dict may have another layout: then composite.
      if (!existing->is_contiguous() || existing->dtype() != parameter.dtype() ||
          existing->device() != parameter.device() || existing->sizes() != parameter.sizes()) {
        return false;
      }
      buffer = *existing;
    } else {
      // PyTorch's first step: the buffer starts as the direction itself (no dampening).
      buffer = ember::empty(parameter.sizes(), parameter.options());
      native::sgd_step_(parameter, gradient, buffer, options, /*first_step=*/true);
      state.insert("momentum_buffer", buffer);
      return true;
    }
  }
  // The group's options themselves travel to the kernel (embedded in its plan): no per-field copy.
  native::sgd_step_(parameter, gradient, buffer, options);
  return true;
}

void SGD::composite_update(const SGDOptions& options, std::size_t index, const Tensor& parameter_handle) {
  Tensor parameter = parameter_handle;
  Tensor gradient = options.maximize ? -parameter.grad() : parameter.grad();
  if (options.weight_decay != 0.0) gradient = gradient.add(parameter, options.weight_decay);
  if (options.momentum != 0.0) {
    auto& state = state_of(index);
    Tensor* buffer = state.find("momentum_buffer");
    if (buffer == nullptr) {
      // PyTorch's first step: the buffer starts as a copy of the gradient (no dampening).
      buffer = &state.insert("momentum_buffer", gradient.clone());
    } else {
      buffer->mul_(options.momentum).add_(gradient, 1.0 - options.dampening);
    }
    gradient = options.nesterov ? gradient.add(*buffer, options.momentum) : *buffer;
  }
  parameter.add_(gradient, -options.lr);
}

}  // namespace ember::optim
