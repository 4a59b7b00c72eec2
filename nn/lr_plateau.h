// nn/lr_plateau.h — optim::lr_scheduler::ReduceLROnPlateau (PyTorch:
// torch.optim.lr_scheduler.ReduceLROnPlateau).
//
// Stepped once per epoch with the value of a monitored metric (a validation loss, say):
// when it has not improved for more than `patience` epochs, the lr is multiplied by
// `factor` (never below min_lr, and not at all when the change would be under eps), then
// `cooldown` epochs pass before bad epochs count again. "Improved" is PyTorch's
// threshold test: mode "min", threshold_mode "rel": value < best * (1 - threshold);
// "abs": value < best - threshold; mode "max" the mirror images.
//
// Usage: ReduceLROnPlateau scheduler(optimizer, {.mode = "min", .factor = 0.5, .patience = 2});
//        for (epoch ...) { train(...); scheduler.step(validation_loss); }
// step() without the value is an error (PyTorch's step(metrics) requires it); SequentialLR
// refuses it for that reason, as PyTorch's does.
//
// Parameter groups: each group's lr is reduced on its own (down to its entry of min_lrs,
// all min_lr here), as in PyTorch.
//
// state_dict: last_epoch, _last_lr, factor, min_lrs, patience, cooldown, eps, threshold,
// best, num_bad_epochs, cooldown_counter, mode_worse, and mode / threshold_mode as 0-d
// int64 (mode: 0 "min", 1 "max"; threshold_mode: 0 "rel", 1 "abs").
#pragma once

#include <string>
#include <vector>

#include <ember/nn/lr_scheduler.h>

namespace ember::optim::lr_scheduler {

struct ReduceLROnPlateauOptions {
  std::string mode = "min";  // "min" or "max"
  double factor = 0.1;
  std::int64_t patience = 10;
  double threshold = 1e-4;
  std::string threshold_mode = "rel";  // "rel" or "abs"
  std::int64_t cooldown = 0;
  double min_lr = 0.0;
  double eps = 1e-8;
};

class ReduceLROnPlateau : public LRScheduler {
 public:
  // "Factor should be < 1.0.", "mode <m> is unknown!", "threshold mode <m> is unknown!".
  explicit ReduceLROnPlateau(Optimizer& optimizer, ReduceLROnPlateauOptions options = {});
  std::string name() const override { return "ReduceLROnPlateau"; }
  // One epoch's value of the monitored metric (a nan counts as no improvement, as in PyTorch).
  void step(double metrics);
  void step() override;  // ValueError: the metric is required
  double best() const { return best_; }
  std::int64_t num_bad_epochs() const { return num_bad_epochs_; }
  StateDict state_dict() const override;
  void load_state_dict(const StateDict& state) override;

 protected:
  double get_lr(std::size_t group) override { return lr(group); }
  void save_entries(StateDict&) const override {}
  void load_entries(StateReader&) override {}

 private:
  bool is_better(double a, double best) const;
  void reduce_lr();

  bool mode_max_ = false;
  double factor_;
  std::int64_t patience_;
  double threshold_;
  bool threshold_abs_ = false;
  std::int64_t cooldown_;
  std::vector<double> min_lrs_;  // one per parameter group (PyTorch's min_lrs)
  double eps_;
  double best_;
  double mode_worse_;
  std::int64_t num_bad_epochs_ = 0;
  std::int64_t cooldown_counter_ = 0;
};

}  // namespace ember::optim::lr_scheduler
