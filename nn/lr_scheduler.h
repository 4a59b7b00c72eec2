// nn/lr_scheduler.h — optim::lr_scheduler: learning-rate schedules (PyTorch:
// torch.optim.lr_scheduler), with PyTorch's names, arguments and numbers.
//
// A scheduler changes its optimizer's lr between optimizer steps:
//   ember::optim::SGD optimizer(model->parameters(), {.lr = 0.1});
//   ember::optim::lr_scheduler::StepLR scheduler(optimizer, /*step_size=*/30, /*gamma=*/0.1);
//   for (epoch ...) { train(...); scheduler.step(); }   // after optimizer.step(), as in PyTorch
// Each computes the next lr the way torch 2.x does — most of them recursively from the lr
// the optimizer holds now (StepLR multiplies it by gamma at each step_size), which is not
// always bit-equal to the closed form — so the float64 sequences are PyTorch's, digit for
// digit (tests/nn/test_lr_scheduler.cpp against tests/reference/lr_scheduler.json).
//
// This file: the base class and the schedules of one formula each — StepLR, MultiStepLR,
// ExponentialLR, LinearLR, CosineAnnealingLR — and SequentialLR, which chains them.
// OneCycleLR (nn/lr_one_cycle.h) and ReduceLROnPlateau (nn/lr_plateau.h) have their own files.
//
// As in PyTorch: constructing a scheduler already applies its value for step 0 (LinearLR
// sets lr * start_factor at once); the first scheduler built on an optimizer records its
// lr as optimizer.initial_lrs, the base of every later one (a SequentialLR's parts share it).
// Parameter groups (nn/optimizer.h): as in PyTorch, each group is scheduled from its own
// initial lr (base_lrs, get_last_lr: one value per group; StepLR multiplies every group's
// lr by gamma, CosineAnnealingLR anneals each group from its own base lr to eta_min).
//
// state_dict(): PyTorch's entries (its __dict__ without the optimizer) as tensors, so a
// scheduler saves with ember::save beside a model and an optimizer (apps/cli/checkpoint.h):
// counters (last_epoch, _step_count, step_size, ...) are 0-d int64, real numbers 0-d
// float64, lists (base_lrs, _last_lr, milestones) 1-d. load_state_dict checks every entry
// first and throws one ValueError naming all problems, changing nothing. Like PyTorch's,
// it does not touch the optimizer: load the optimizer's state_dict too (its lr).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <ember/nn/lr_state.h>
#include <ember/nn/optimizer.h>

namespace ember::optim::lr_scheduler {

class LRScheduler {
 public:
  virtual ~LRScheduler() = default;
  LRScheduler(const LRScheduler&) = delete;
  LRScheduler& operator=(const LRScheduler&) = delete;

  // One step: last_epoch + 1, and the optimizer's lr set to that epoch's value.
  virtual void step();
  // The lr the last step (or the constructor) set, one per parameter group.
  std::vector<double> get_last_lr() const { return last_lr_; }
  std::int64_t last_epoch() const { return last_epoch_; }
  const std::vector<double>& base_lrs() const { return base_lrs_; }
  Optimizer& optimizer() const { return optimizer_; }
  // PyTorch's class name ("StepLR", ...), used in error messages.
  virtual std::string name() const = 0;

  virtual StateDict state_dict() const;
  virtual void load_state_dict(const StateDict& state);
  // Sets the optimizer's lr (OneCycleLR: and momentum) to the values this scheduler last
  // set — what loading the optimizer's state_dict restores in PyTorch — for a caller that
  // restores the optimizer's state without its param_groups (apps/cli's --resume).
  virtual void restore_optimizer_values();

 protected:
  // Records optimizer.initial_lr if no scheduler did (PyTorch's setdefault) and takes it as
  // base lr. The most derived constructor then calls initial_step() (a virtual get_lr
  // cannot run from here).
  explicit LRScheduler(Optimizer& optimizer);
  // PyTorch's _initial_step: _step_count 0, then one step in "initial mode".
  void initial_step();
  // PyTorch's _update_lr: last_epoch + 1 and get_lr(), or, given an epoch, last_epoch = epoch
  // and the closed form when the schedule has one.
  void update_lr(std::optional<std::int64_t> epoch = std::nullopt);
  // Group g's value for last_epoch (already advanced); may read the group's lr, lr(group),
  // its base_lrs_[group] and is_initial_. PyTorch's get_lr computes the list of these.
  virtual double get_lr(std::size_t group) = 0;
  virtual std::optional<double> closed_form_lr(std::size_t /*group*/) const { return std::nullopt; }
  // The schedule's own entries (hyper-parameters, beyond the base class's counters).
  virtual void save_entries(StateDict& state) const = 0;
  virtual void load_entries(StateReader& reader) = 0;

  double lr(std::size_t group) const { return optimizer_.group_learning_rate(group); }
  // Every group's current lr (PyTorch: [group["lr"] for group in optimizer.param_groups]).
  std::vector<double> group_lrs() const;

  Optimizer& optimizer_;
  std::vector<double> base_lrs_;
  std::int64_t last_epoch_ = -1;
  std::int64_t step_count_ = 0;
  bool is_initial_ = false;
  std::vector<double> last_lr_;

  friend class SequentialLR;  // undoes and redoes its parts' steps, as PyTorch's does
};

// lr * gamma every step_size epochs.
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, std::int64_t step_size, double gamma = 0.1);
  std::string name() const override { return "StepLR"; }

 protected:
  double get_lr(std::size_t group) override;
  std::optional<double> closed_form_lr(std::size_t group) const override;
  void save_entries(StateDict& state) const override;
  void load_entries(StateReader& reader) override;

 private:
  std::int64_t step_size_;
  double gamma_;
};

// lr * gamma at each milestone (a milestone listed k times: gamma^k).
class MultiStepLR : public LRScheduler {
 public:
  MultiStepLR(Optimizer& optimizer, std::vector<std::int64_t> milestones, double gamma = 0.1);
  std::string name() const override { return "MultiStepLR"; }

 protected:
  double get_lr(std::size_t group) override;
  std::optional<double> closed_form_lr(std::size_t group) const override;
  void save_entries(StateDict& state) const override;
  void load_entries(StateReader& reader) override;

 private:
  std::vector<std::int64_t> milestones_;  // sorted, repeats kept (PyTorch's Counter)
  double gamma_;
};

// lr * gamma every epoch.
class ExponentialLR : public LRScheduler {
 public:
  ExponentialLR(Optimizer& optimizer, double gamma);
  std::string name() const override { return "ExponentialLR"; }

 protected:
  double get_lr(std::size_t group) override;
  std::optional<double> closed_form_lr(std::size_t group) const override;
  void save_entries(StateDict& state) const override;
  void load_entries(StateReader& reader) override;

 private:
  double gamma_;
};

// The factor goes linearly from start_factor to end_factor over total_iters epochs (a
// warm-up: start_factor = 1/N, end_factor 1).
class LinearLR : public LRScheduler {
 public:
  // "Starting multiplicative factor expected to be greater than 0 and less or equal to 1."
  LinearLR(Optimizer& optimizer, double start_factor = 1.0 / 3, double end_factor = 1.0, std::int64_t total_iters = 5);
  std::string name() const override { return "LinearLR"; }

 protected:
  double get_lr(std::size_t group) override;
  std::optional<double> closed_form_lr(std::size_t group) const override;
  void save_entries(StateDict& state) const override;
  void load_entries(StateReader& reader) override;

 private:
  double start_factor_, end_factor_;
  std::int64_t total_iters_;
};

// Half a cosine from the base lr down to eta_min over T_max epochs (and back up after).
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& optimizer, std::int64_t T_max, double eta_min = 0.0);
  std::string name() const override { return "CosineAnnealingLR"; }

 protected:
  double get_lr(std::size_t group) override;
  std::optional<double> closed_form_lr(std::size_t group) const override;
  void save_entries(StateDict& state) const override;
  void load_entries(StateReader& reader) override;

 private:
  std::int64_t T_max_;
  double eta_min_;
};

// schedulers[0] until milestones[0], then schedulers[1] (restarted at its epoch 0), ...
// Built after its parts, on the same optimizer, as in PyTorch; it owns them.
// state_dict: last_epoch, _milestones, _last_lr and "_schedulers.<i>.<entry>" for each part.
class SequentialLR : public LRScheduler {
 public:
  SequentialLR(Optimizer& optimizer, std::vector<std::unique_ptr<LRScheduler>> schedulers,
               std::vector<std::int64_t> milestones);
  void step() override;
  std::string name() const override { return "SequentialLR"; }
  const std::vector<std::unique_ptr<LRScheduler>>& schedulers() const { return schedulers_; }
  StateDict state_dict() const override;
  void load_state_dict(const StateDict& state) override;

 protected:
  double get_lr(std::size_t group) override { return lr(group); }  // never called: step() delegates
  void save_entries(StateDict&) const override {}
  void load_entries(StateReader&) override {}

 private:
  std::vector<std::unique_ptr<LRScheduler>> schedulers_;
  std::vector<std::int64_t> milestones_;
};

}  // namespace ember::optim::lr_scheduler
