// nn/lr_scheduler.cpp — the base scheduler, the one-formula schedules and SequentialLR
// (see lr_scheduler.h). Each get_lr is torch 2.x's, operation for operation: the same
// float64 operations in the same order give the same numbers (std::cos is the C library's
// cos, which Python's math.cos also calls).
#include <ember/nn/lr_scheduler.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include <ember/core/error.h>
#include <ember/core/factories.h>
#include <ember/nn/lr_plateau.h>
#include <ember/nn/lr_state.h>

namespace ember::optim::lr_scheduler {

// ------------------------------------------------------------------ LRScheduler

LRScheduler::LRScheduler(Optimizer& optimizer) : optimizer_(optimizer) {
  if (optimizer_.initial_lrs.empty()) optimizer_.initial_lrs = group_lrs();
  base_lrs_ = optimizer_.initial_lrs;
}

std::vector<double> LRScheduler::group_lrs() const {
  std::vector<double> lrs;
  for (std::size_t g = 0; g < optimizer_.param_group_count(); ++g) lrs.push_back(lr(g));
  return lrs;
}

void LRScheduler::initial_step() {
  step_count_ = 0;
  is_initial_ = true;
  try {
    step();
  } catch (...) {
    is_initial_ = false;
    throw;
  }
  is_initial_ = false;
}

void LRScheduler::restore_optimizer_values() {
  for (std::size_t g = 0; g < last_lr_.size(); ++g) optimizer_.set_group_learning_rate(g, last_lr_[g]);
}

void LRScheduler::step() {
  ++step_count_;
  update_lr();
}

void LRScheduler::update_lr(std::optional<std::int64_t> epoch) {
  if (!epoch) ++last_epoch_;
  else last_epoch_ = *epoch;
  // Every group's value first, then set (PyTorch: the list from get_lr, then zip).
  std::vector<double> values;
  for (std::size_t g = 0; g < optimizer_.param_group_count(); ++g) {
    std::optional<double> closed = epoch ? closed_form_lr(g) : std::nullopt;
    values.push_back(closed ? *closed : get_lr(g));
  }
  for (std::size_t g = 0; g < values.size(); ++g) optimizer_.set_group_learning_rate(g, values[g]);
  last_lr_ = group_lrs();
}

StateDict LRScheduler::state_dict() const {
  StateDict state;
  save_entries(state);
  state.insert("base_lrs", state_tensor(base_lrs_));
  state.insert("last_epoch", state_tensor(last_epoch_));
  state.insert("_step_count", state_tensor(step_count_));
  state.insert("_last_lr", state_tensor(last_lr_));
  return state;
}

void LRScheduler::load_state_dict(const StateDict& state) {
  StateReader reader(state);
  // The schedule's entries first: they are applied only if everything read is fine.
  std::vector<double> base_lrs = reader.real_list("base_lrs");
  std::int64_t last_epoch = reader.whole_number("last_epoch");
  std::int64_t step_count = reader.whole_number("_step_count");
  std::vector<double> last_lr = reader.real_list("_last_lr");
  const std::size_t groups = optimizer_.param_group_count();
  if (reader.ok() && (base_lrs.size() != groups || last_lr.size() != groups)) {
    reader.reject("base_lrs and _last_lr must hold one value per parameter group (" + std::to_string(groups) + ")");
  }
  // load_entries applies the schedule's entries only when reader.ok() after reading them;
  // a key nobody read is found only afterwards, so the entries are put back then.
  StateDict before = state_dict();
  load_entries(reader);
  try {
    reader.throw_if_problems(name());
  } catch (const ValueError&) {
    StateReader undo(before);
    load_entries(undo);
    throw;
  }
  base_lrs_ = base_lrs;
  last_epoch_ = last_epoch;
  step_count_ = step_count;
  last_lr_ = last_lr;
}

// ------------------------------------------------------------------ StepLR

StepLR::StepLR(Optimizer& optimizer, std::int64_t step_size, double gamma)
    : LRScheduler(optimizer), step_size_(step_size), gamma_(gamma) {
  // PyTorch 2.x takes any int; 0 would divide by zero at the first step.
  EMBER_CHECK(step_size > 0, ValueError, "StepLR: step_size must be a positive integer, got ", step_size);
  initial_step();
}

double StepLR::get_lr(std::size_t group) {
  if (last_epoch_ == 0 || last_epoch_ % step_size_ != 0) return lr(group);
  return lr(group) * gamma_;
}

std::optional<double> StepLR::closed_form_lr(std::size_t group) const {
  return base_lrs_[group] * std::pow(gamma_, static_cast<double>(last_epoch_ / step_size_));
}

void StepLR::save_entries(StateDict& state) const {
  state.insert("step_size", state_tensor(step_size_));
  state.insert("gamma", state_tensor(gamma_));
}

void StepLR::load_entries(StateReader& reader) {
  std::int64_t step_size = reader.whole_number("step_size");
  double gamma = reader.number("gamma");
  if (reader.ok() && step_size <= 0) reader.reject("step_size must be a positive integer");
  if (!reader.ok()) return;
  step_size_ = step_size;
  gamma_ = gamma;
}

// ------------------------------------------------------------------ MultiStepLR

MultiStepLR::MultiStepLR(Optimizer& optimizer, std::vector<std::int64_t> milestones, double gamma)
    : LRScheduler(optimizer), milestones_(std::move(milestones)), gamma_(gamma) {
  std::sort(milestones_.begin(), milestones_.end());
  initial_step();
}

double MultiStepLR::get_lr(std::size_t group) {
  const auto count = std::count(milestones_.begin(), milestones_.end(), last_epoch_);
  if (count == 0) return lr(group);
  // Python's float ** int: pow of doubles (an exact small power for counts of 1).
  return lr(group) * std::pow(gamma_, static_cast<double>(count));
}

std::optional<double> MultiStepLR::closed_form_lr(std::size_t group) const {
  const auto passed = std::upper_bound(milestones_.begin(), milestones_.end(), last_epoch_) - milestones_.begin();
  return base_lrs_[group] * std::pow(gamma_, static_cast<double>(passed));
}

void MultiStepLR::save_entries(StateDict& state) const {
  state.insert("milestones", state_tensor(milestones_));
  state.insert("gamma", state_tensor(gamma_));
}

void MultiStepLR::load_entries(StateReader& reader) {
  std::vector<std::int64_t> milestones = reader.whole_number_list("milestones");
  double gamma = reader.number("gamma");
  if (!reader.ok()) return;
  std::sort(milestones.begin(), milestones.end());
  milestones_ = milestones;
  gamma_ = gamma;
}

// ------------------------------------------------------------------ ExponentialLR

ExponentialLR::ExponentialLR(Optimizer& optimizer, double gamma) : LRScheduler(optimizer), gamma_(gamma) {
  initial_step();
}

double ExponentialLR::get_lr(std::size_t group) {
  // Built from a checkpoint, the initial step must not advance the lr a step ahead.
  if (is_initial_) return lr(group);
  return lr(group) * gamma_;
}

std::optional<double> ExponentialLR::closed_form_lr(std::size_t group) const {
  return base_lrs_[group] * std::pow(gamma_, static_cast<double>(last_epoch_));
}

void ExponentialLR::save_entries(StateDict& state) const { state.insert("gamma", state_tensor(gamma_)); }

void ExponentialLR::load_entries(StateReader& reader) {
  double gamma = reader.number("gamma");
  if (reader.ok()) gamma_ = gamma;
}

// ------------------------------------------------------------------ LinearLR

namespace {
void check_linear_factors(double start_factor, double end_factor) {
  EMBER_CHECK(start_factor <= 1.0 && start_factor > 0, ValueError,
              "Starting multiplicative factor expected to be greater than 0 and less or equal to 1.");
  EMBER_CHECK(end_factor <= 1.0 && end_factor >= 0, ValueError,
              "Ending multiplicative factor expected to be between 0 and 1.");
}
}  // namespace

LinearLR::LinearLR(Optimizer& optimizer, double start_factor, double end_factor, std::int64_t total_iters)
    : LRScheduler(optimizer), start_factor_(start_factor), end_factor_(end_factor), total_iters_(total_iters) {
  check_linear_factors(start_factor, end_factor);
  EMBER_CHECK(total_iters >= 0, ValueError, "LinearLR: total_iters must be non-negative, got ", total_iters);
  initial_step();
}

double LinearLR::get_lr(std::size_t group) {
  if (last_epoch_ == 0) return lr(group) * start_factor_;
  if (is_initial_ || last_epoch_ > total_iters_) return lr(group);
  return lr(group) * (1.0 + (end_factor_ - start_factor_) /
                           (static_cast<double>(total_iters_) * start_factor_ +
                            static_cast<double>(last_epoch_ - 1) * (end_factor_ - start_factor_)));
}

std::optional<double> LinearLR::closed_form_lr(std::size_t group) const {
  return base_lrs_[group] * (start_factor_ + (end_factor_ - start_factor_) *
                                             static_cast<double>(std::min(total_iters_, last_epoch_)) /
                                             static_cast<double>(total_iters_));
}

void LinearLR::save_entries(StateDict& state) const {
  state.insert("start_factor", state_tensor(start_factor_));
  state.insert("end_factor", state_tensor(end_factor_));
  state.insert("total_iters", state_tensor(total_iters_));
}

void LinearLR::load_entries(StateReader& reader) {
  double start_factor = reader.number("start_factor");
  double end_factor = reader.number("end_factor");
  std::int64_t total_iters = reader.whole_number("total_iters");
  if (reader.ok()) {
    try {
      check_linear_factors(start_factor, end_factor);
    } catch (const ValueError& error) {
      reader.reject(error.what());
    }
  }
  if (!reader.ok()) return;
  start_factor_ = start_factor;
  end_factor_ = end_factor;
  total_iters_ = total_iters;
}

// ------------------------------------------------------------------ CosineAnnealingLR

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, std::int64_t T_max, double eta_min)
    : LRScheduler(optimizer), T_max_(T_max), eta_min_(eta_min) {
  EMBER_CHECK(T_max > 0, ValueError, "CosineAnnealingLR: T_max must be a positive integer, got ", T_max);
  initial_step();
}

double CosineAnnealingLR::get_lr(std::size_t group) {
  constexpr double pi = std::numbers::pi;
  const double base = base_lrs_[group];
  const auto epoch = static_cast<double>(last_epoch_);
  const auto T = static_cast<double>(T_max_);
  if (is_initial_) return lr(group);
  if (step_count_ == 1 && last_epoch_ > 0) {
    return eta_min_ + (base - eta_min_) * (1 + std::cos(epoch * pi / T)) / 2;
  }
  // Python's % is a floor modulo: (e - 1 - T) mod 2T, never negative.
  const std::int64_t period = 2 * T_max_;
  if ((((last_epoch_ - 1 - T_max_) % period) + period) % period == 0) {
    return lr(group) + (base - eta_min_) * (1 - std::cos(pi / T)) / 2;
  }
  return (1 + std::cos(pi * epoch / T)) / (1 + std::cos(pi * (epoch - 1) / T)) * (lr(group) - eta_min_) + eta_min_;
}

std::optional<double> CosineAnnealingLR::closed_form_lr(std::size_t group) const {
  constexpr double pi = std::numbers::pi;
  return eta_min_ + (base_lrs_[group] - eta_min_) *
                        (1 + std::cos(pi * static_cast<double>(last_epoch_) / static_cast<double>(T_max_))) / 2;
}

void CosineAnnealingLR::save_entries(StateDict& state) const {
  state.insert("T_max", state_tensor(T_max_));
  state.insert("eta_min", state_tensor(eta_min_));
}

void CosineAnnealingLR::load_entries(StateReader& reader) {
  std::int64_t T_max = reader.whole_number("T_max");
  double eta_min = reader.number("eta_min");
  if (reader.ok() && T_max <= 0) reader.reject("T_max must be a positive integer");
  if (!reader.ok()) return;
  T_max_ = T_max;
  eta_min_ = eta_min;
}

// ------------------------------------------------------------------ SequentialLR

SequentialLR::SequentialLR(Optimizer& optimizer, std::vector<std::unique_ptr<LRScheduler>> schedulers,
                           std::vector<std::int64_t> milestones)
    : LRScheduler(optimizer), schedulers_(std::move(schedulers)), milestones_(std::move(milestones)) {
  EMBER_CHECK(!schedulers_.empty(), ValueError, "SequentialLR expects at least one scheduler, but got no scheduler.");
  for (std::size_t i = 0; i < schedulers_.size(); ++i) {
    EMBER_CHECK(schedulers_[i] != nullptr, ValueError, "SequentialLR: scheduler at index ", i, " is null");
    EMBER_CHECK(dynamic_cast<ReduceLROnPlateau*>(schedulers_[i].get()) == nullptr, ValueError,
                "SequentialLR does not support `ReduceLROnPlateau` scheduler as it requires additional kwargs to be "
                "specified when calling `step`, but got one at index ",
                i, " in the given schedulers sequence.");
    EMBER_CHECK(&schedulers_[i]->optimizer() == &optimizer, ValueError,
                "SequentialLR expects all schedulers to belong to the same optimizer, but got scheduler ",
                schedulers_[i]->name(), " at index ", i, " has another optimizer, which is different from ",
                optimizer.name(), ".");
  }
  EMBER_CHECK(milestones_.size() == schedulers_.size() - 1, ValueError,
              "Sequential Schedulers expects number of schedulers provided to be one more than the number of "
              "milestone points, but got number of schedulers ",
              schedulers_.size(), " and the number of milestones to be equal to ", milestones_.size());
  last_epoch_ = 0;
  // Back to the initial lr, the parts' construction steps undone, and only the part that
  // runs at step 0 initialised again.
  for (std::size_t g = 0; g < optimizer.param_group_count(); ++g)
    optimizer.set_group_learning_rate(g, optimizer.initial_lrs[g]);
  for (auto& scheduler : schedulers_) --scheduler->last_epoch_;
  const auto first = std::upper_bound(milestones_.begin(), milestones_.end(), 0) - milestones_.begin();
  schedulers_[first]->initial_step();
  last_lr_ = schedulers_[first]->get_last_lr();
}

void SequentialLR::step() {
  ++last_epoch_;
  const auto index = std::upper_bound(milestones_.begin(), milestones_.end(), last_epoch_) - milestones_.begin();
  LRScheduler& scheduler = *schedulers_[index];
  if (index > 0 && milestones_[index - 1] == last_epoch_) {
    scheduler.update_lr(0);  // restarts at its epoch 0 (closed form where it has one)
  } else {
    scheduler.step();
  }
  last_lr_ = scheduler.get_last_lr();
}

StateDict SequentialLR::state_dict() const {
  StateDict state;
  state.insert("last_epoch", state_tensor(last_epoch_));
  state.insert("_milestones", state_tensor(milestones_));
  state.insert("_last_lr", state_tensor(last_lr_));
  for (std::size_t i = 0; i < schedulers_.size(); ++i) {
    const std::string prefix = "_schedulers." + std::to_string(i) + ".";
    for (const auto& [key, value] : schedulers_[i]->state_dict()) state.insert(prefix + key, value);
  }
  return state;
}

void SequentialLR::load_state_dict(const StateDict& state) {
  StateDict own;
  std::vector<StateDict> parts(schedulers_.size());
  std::vector<std::string> problems;
  for (const auto& [key, value] : state) {
    if (key.rfind("_schedulers.", 0) != 0) {
      own.insert(key, value);
      continue;
    }
    const std::size_t dot = key.find('.', 12);
    const std::string index_text = key.substr(12, dot == std::string::npos ? std::string::npos : dot - 12);
    std::size_t index = 0;
    bool valid = dot != std::string::npos && !index_text.empty() && index_text.size() < 6 &&
                 index_text.find_first_not_of("0123456789") == std::string::npos;
    if (valid) index = std::stoul(index_text);
    if (!valid || index >= schedulers_.size()) {
      problems.push_back("unexpected key \"" + key + "\"");
      continue;
    }
    parts[index].insert(key.substr(dot + 1), value);
  }
  StateReader reader(own);
  std::int64_t last_epoch = reader.whole_number("last_epoch");
  std::vector<std::int64_t> milestones = reader.whole_number_list("_milestones");
  std::vector<double> last_lr = reader.real_list("_last_lr");
  if (reader.ok() && milestones.size() != milestones_.size()) {
    reader.reject("_milestones has " + std::to_string(milestones.size()) + " entries for " +
                  std::to_string(schedulers_.size()) + " schedulers");
  }
  for (const std::string& problem : problems) reader.reject(problem);
  reader.throw_if_problems(name());
  // Each part checks its own entries (and throws naming itself) before anything changes.
  std::vector<std::unique_ptr<StateDict>> before;
  for (auto& scheduler : schedulers_) before.push_back(std::make_unique<StateDict>(scheduler->state_dict()));
  try {
    for (std::size_t i = 0; i < schedulers_.size(); ++i) schedulers_[i]->load_state_dict(parts[i]);
  } catch (...) {
    for (std::size_t i = 0; i < schedulers_.size(); ++i) schedulers_[i]->load_state_dict(*before[i]);
    throw;
  }
  last_epoch_ = last_epoch;
  milestones_ = milestones;
  last_lr_ = last_lr;
}

}  // namespace ember::optim::lr_scheduler
