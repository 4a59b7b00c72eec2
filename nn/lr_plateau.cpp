// nn/lr_plateau.cpp — ReduceLROnPlateau (see lr_plateau.h), torch 2.x's step for step.
#include <ember/nn/lr_plateau.h>

#include <algorithm>
#include <limits>

#include <ember/core/error.h>

namespace ember::optim::lr_scheduler {

ReduceLROnPlateau::ReduceLROnPlateau(Optimizer& optimizer, ReduceLROnPlateauOptions options)
    : LRScheduler(optimizer),
      factor_(options.factor),
      patience_(options.patience),
      threshold_(options.threshold),
      cooldown_(options.cooldown),
      min_lrs_(optimizer.param_group_count(), options.min_lr),
      eps_(options.eps) {
  EMBER_CHECK(options.factor < 1.0, ValueError, "Factor should be < 1.0.");
  EMBER_CHECK(options.mode == "min" || options.mode == "max", ValueError, "mode ", options.mode, " is unknown!");
  EMBER_CHECK(options.threshold_mode == "rel" || options.threshold_mode == "abs", ValueError, "threshold mode ",
              options.threshold_mode, " is unknown!");
  mode_max_ = options.mode == "max";
  threshold_abs_ = options.threshold_mode == "abs";
  // PyTorch's ReduceLROnPlateau starts at last_epoch 0 and takes no initial step.
  last_epoch_ = 0;
  last_lr_ = group_lrs();
  constexpr double inf = std::numeric_limits<double>::infinity();
  mode_worse_ = mode_max_ ? -inf : inf;
  best_ = mode_worse_;
}

void ReduceLROnPlateau::step() {
  throw ValueError("ReduceLROnPlateau.step() missing 1 required positional argument: 'metrics'");
}

bool ReduceLROnPlateau::is_better(double a, double best) const {
  if (!mode_max_ && !threshold_abs_) return a < best * (1.0 - threshold_);
  if (!mode_max_) return a < best - threshold_;
  if (!threshold_abs_) return a > best * (threshold_ + 1.0);
  return a > best + threshold_;
}

void ReduceLROnPlateau::step(double metrics) {
  last_epoch_ += 1;
  if (is_better(metrics, best_)) {
    best_ = metrics;
    num_bad_epochs_ = 0;
  } else {
    num_bad_epochs_ += 1;
  }
  if (cooldown_counter_ > 0) {
    cooldown_counter_ -= 1;
    num_bad_epochs_ = 0;  // bad epochs in cooldown do not count
  }
  if (num_bad_epochs_ > patience_) {
    reduce_lr();
    cooldown_counter_ = cooldown_;
    num_bad_epochs_ = 0;
  }
  last_lr_ = group_lrs();
}

void ReduceLROnPlateau::reduce_lr() {
  for (std::size_t g = 0; g < min_lrs_.size(); ++g) {
    const double old_lr = lr(g);
    const double new_lr = std::max(old_lr * factor_, min_lrs_[g]);
    if (old_lr - new_lr > eps_) optimizer_.set_group_learning_rate(g, new_lr);
  }
}

StateDict ReduceLROnPlateau::state_dict() const {
  StateDict state;
  state.insert("factor", state_tensor(factor_));
  state.insert("min_lrs", state_tensor(min_lrs_));
  state.insert("patience", state_tensor(patience_));
  state.insert("cooldown", state_tensor(cooldown_));
  state.insert("eps", state_tensor(eps_));
  state.insert("last_epoch", state_tensor(last_epoch_));
  state.insert("_last_lr", state_tensor(last_lr_));
  state.insert("mode", state_tensor(std::int64_t{mode_max_ ? 1 : 0}));
  state.insert("threshold", state_tensor(threshold_));
  state.insert("threshold_mode", state_tensor(std::int64_t{threshold_abs_ ? 1 : 0}));
  state.insert("best", state_tensor(best_));
  state.insert("num_bad_epochs", state_tensor(num_bad_epochs_));
  state.insert("cooldown_counter", state_tensor(cooldown_counter_));
  state.insert("mode_worse", state_tensor(mode_worse_));
  return state;
}

void ReduceLROnPlateau::load_state_dict(const StateDict& state) {
  StateReader reader(state);
  const double factor = reader.number("factor");
  const std::vector<double> min_lrs = reader.real_list("min_lrs");
  const std::int64_t patience = reader.whole_number("patience");
  const std::int64_t cooldown = reader.whole_number("cooldown");
  const double eps = reader.number("eps");
  const std::int64_t last_epoch = reader.whole_number("last_epoch");
  const std::vector<double> last_lr = reader.real_list("_last_lr");
  const std::int64_t mode = reader.whole_number("mode");
  const double threshold = reader.number("threshold");
  const std::int64_t threshold_mode = reader.whole_number("threshold_mode");
  const double best = reader.number("best");
  const std::int64_t num_bad_epochs = reader.whole_number("num_bad_epochs");
  const std::int64_t cooldown_counter = reader.whole_number("cooldown_counter");
  (void)reader.number("mode_worse");  // follows from mode (PyTorch recomputes it too)
  if (reader.ok() && factor >= 1.0) reader.reject("Factor should be < 1.0.");
  if (reader.ok() && (mode != 0 && mode != 1)) reader.reject("mode must be 0 (min) or 1 (max)");
  if (reader.ok() && (threshold_mode != 0 && threshold_mode != 1)) reader.reject("threshold_mode must be 0 (rel) or 1 (abs)");
  const std::size_t groups = optimizer_.param_group_count();
  if (reader.ok() && (min_lrs.size() != groups || last_lr.size() != groups)) {
    reader.reject("min_lrs and _last_lr must hold one value per parameter group (" + std::to_string(groups) + ")");
  }
  reader.throw_if_problems(name());
  factor_ = factor;
  min_lrs_ = min_lrs;
  patience_ = patience;
  cooldown_ = cooldown;
  eps_ = eps;
  last_epoch_ = last_epoch;
  last_lr_ = last_lr;
  mode_max_ = mode == 1;
  threshold_ = threshold;
  threshold_abs_ = threshold_mode == 1;
  best_ = best;
  num_bad_epochs_ = num_bad_epochs;
  cooldown_counter_ = cooldown_counter;
  constexpr double inf = std::numeric_limits<double>::infinity();
  mode_worse_ = mode_max_ ? -inf : inf;
}

}  // namespace ember::optim::lr_scheduler
