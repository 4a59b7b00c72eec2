// nn/lr_one_cycle.cpp — OneCycleLR (see lr_one_cycle.h), torch 2.x's get_lr operation for operation.
#include <ember/nn/lr_one_cycle.h>

#include <cmath>
#include <numbers>

#include <ember/core/error.h>
#include <ember/nn/python_format.h>

namespace ember::optim::lr_scheduler {

namespace {
// The phases as PyTorch lists them: each ends at end_step, going from one named value to
// another. Which values is fixed by the phase count (2, or 3 with three_phase).
enum Value { kInitialLr, kMaxLr, kMinLr, kBaseMomentum, kMaxMomentum };
struct Phase {
  Value start_lr, end_lr, start_momentum, end_momentum;
};
const Phase kTwoPhases[] = {{kInitialLr, kMaxLr, kMaxMomentum, kBaseMomentum},
                            {kMaxLr, kMinLr, kBaseMomentum, kMaxMomentum}};
const Phase kThreePhases[] = {{kInitialLr, kMaxLr, kMaxMomentum, kBaseMomentum},
                              {kMaxLr, kInitialLr, kBaseMomentum, kMaxMomentum},
                              {kInitialLr, kMinLr, kMaxMomentum, kMaxMomentum}};
}  // namespace

OneCycleLR::OneCycleLR(Optimizer& optimizer, double max_lr, std::int64_t total_steps, OneCycleOptions options)
    : LRScheduler(optimizer), total_steps_(total_steps) {
  EMBER_CHECK(total_steps > 0, ValueError, "Expected positive integer total_steps, but got ", total_steps);
  const double total = static_cast<double>(total_steps);
  if (options.three_phase) {
    phase_end_steps_ = {options.pct_start * total - 1, 2 * options.pct_start * total - 2, total - 1};
  } else {
    phase_end_steps_ = {options.pct_start * total - 1, total - 1};
  }
  EMBER_CHECK(options.pct_start >= 0 && options.pct_start <= 1, ValueError,
              "Expected float between 0 and 1 pct_start, but got ", nn::python_float(options.pct_start));
  EMBER_CHECK(options.anneal_strategy == "cos" || options.anneal_strategy == "linear", ValueError,
              "anneal_strategy must be one of 'cos' or 'linear', instead got ", options.anneal_strategy);
  anneal_cos_ = options.anneal_strategy == "cos";
  // PyTorch writes these into the param_group, replacing any initial_lr (not setdefault).
  initial_lr_ = max_lr / options.div_factor;
  max_lr_ = max_lr;
  min_lr_ = initial_lr_ / options.final_div_factor;
  optimizer.initial_lrs.assign(optimizer.param_group_count(), initial_lr_);
  base_lrs_ = optimizer.initial_lrs;
  cycle_momentum_ = options.cycle_momentum;
  if (cycle_momentum_) {
    EMBER_CHECK(optimizer.has_momentum(), ValueError,
                "optimizer must support momentum or beta1 with `cycle_momentum` option enabled");
    use_beta1_ = optimizer.uses_betas();
    max_momentum_ = options.max_momentum;
    base_momentum_ = options.base_momentum;
    optimizer.set_momentum(max_momentum_);
  }
  initial_step();
}

double OneCycleLR::anneal(double start, double end, double pct) const {
  if (anneal_cos_) {
    const double cos_out = std::cos(std::numbers::pi * pct) + 1;
    return end + (start - end) / 2.0 * cos_out;
  }
  return (end - start) * pct + start;
}

std::pair<double, double> OneCycleLR::values_at(std::int64_t step_num) const {
  EMBER_CHECK(step_num <= total_steps_, ValueError, "Tried to step ", step_num,
              " times. The specified number of total steps is ", total_steps_);
  const double values[] = {initial_lr_, max_lr_, min_lr_, base_momentum_, max_momentum_};
  const Phase* phases = phase_end_steps_.size() == 3 ? kThreePhases : kTwoPhases;
  const auto step = static_cast<double>(step_num);
  double start_step = 0.0;
  for (std::size_t i = 0; i < phase_end_steps_.size(); ++i) {
    const double end_step = phase_end_steps_[i];
    if (step <= end_step || i + 1 == phase_end_steps_.size()) {
      // Python raises ZeroDivisionError here (a phase of length 0, e.g. pct_start 1).
      EMBER_CHECK(end_step != start_step, ValueError, "float division by zero");
      const double pct = (step - start_step) / (end_step - start_step);
      const Phase& phase = phases[i];
      return {anneal(values[phase.start_lr], values[phase.end_lr], pct),
              anneal(values[phase.start_momentum], values[phase.end_momentum], pct)};
    }
    start_step = end_step;
  }
  return {initial_lr_, 0.0};  // unreachable: the last phase always answers
}

double OneCycleLR::get_lr(std::size_t group) {
  auto [computed_lr, computed_momentum] = values_at(last_epoch_);
  if (cycle_momentum_) optimizer_.set_group_momentum(group, computed_momentum);
  return computed_lr;
}

void OneCycleLR::restore_optimizer_values() {
  LRScheduler::restore_optimizer_values();
  if (cycle_momentum_) optimizer_.set_momentum(values_at(last_epoch_).second);
}

void OneCycleLR::save_entries(StateDict& state) const {
  state.insert("total_steps", state_tensor(total_steps_));
  state.insert("_schedule_phases.end_step", state_tensor(phase_end_steps_));
  state.insert("_anneal_func_type", state_tensor(std::int64_t{anneal_cos_ ? 0 : 1}));
  state.insert("cycle_momentum", state_tensor(cycle_momentum_));
  state.insert("use_beta1", state_tensor(use_beta1_));
  state.insert("initial_lr", state_tensor(initial_lr_));
  state.insert("max_lr", state_tensor(max_lr_));
  state.insert("min_lr", state_tensor(min_lr_));
  state.insert("base_momentum", state_tensor(base_momentum_));
  state.insert("max_momentum", state_tensor(max_momentum_));
}

void OneCycleLR::load_entries(StateReader& reader) {
  const std::int64_t total_steps = reader.whole_number("total_steps");
  const std::vector<double> end_steps = reader.real_list("_schedule_phases.end_step");
  const std::int64_t anneal_type = reader.whole_number("_anneal_func_type");
  const bool cycle_momentum = reader.flag("cycle_momentum");
  const bool use_beta1 = reader.flag("use_beta1");
  const double initial_lr = reader.number("initial_lr"), max_lr = reader.number("max_lr");
  const double min_lr = reader.number("min_lr");
  const double base_momentum = reader.number("base_momentum"), max_momentum = reader.number("max_momentum");
  if (reader.ok() && total_steps <= 0) reader.reject("total_steps must be a positive integer");
  if (reader.ok() && end_steps.size() != 2 && end_steps.size() != 3) {
    reader.reject("_schedule_phases.end_step must hold 2 or 3 phases");
  }
  if (reader.ok() && anneal_type != 0 && anneal_type != 1) reader.reject("_anneal_func_type must be 0 (cos) or 1 (linear)");
  if (reader.ok() && cycle_momentum && !optimizer_.has_momentum()) {
    reader.reject("optimizer must support momentum or beta1 with `cycle_momentum` option enabled");
  }
  if (!reader.ok()) return;
  total_steps_ = total_steps;
  phase_end_steps_ = end_steps;
  anneal_cos_ = anneal_type == 0;
  cycle_momentum_ = cycle_momentum;
  use_beta1_ = use_beta1;
  initial_lr_ = initial_lr;
  max_lr_ = max_lr;
  min_lr_ = min_lr;
  base_momentum_ = base_momentum;
  max_momentum_ = max_momentum;
}

}  // namespace ember::optim::lr_scheduler
