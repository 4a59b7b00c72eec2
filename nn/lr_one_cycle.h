// nn/lr_one_cycle.h — optim::lr_scheduler::OneCycleLR (PyTorch: torch.optim.lr_scheduler.OneCycleLR).
//
// Leslie Smith's "1cycle" policy, per optimizer step: the lr rises from max_lr/div_factor
// to max_lr over the first pct_start of total_steps, then anneals to
// max_lr/div_factor/final_div_factor (three_phase: back to the initial lr first, then
// down). With cycle_momentum (the default) the momentum moves the opposite way, between
// max_momentum and base_momentum: SGD's momentum or Adam's beta1, exactly as PyTorch sets
// param_group["momentum"] / ["betas"][0] — including for an SGD built with momentum 0,
// which PyTorch too gives momentum 0.95 at once.
//
// Usage: OneCycleLR scheduler(optimizer, /*max_lr=*/0.1, /*total_steps=*/epochs * batches);
//        ... optimizer.step(); scheduler.step();   // after every optimizer step
//
// Parameter groups: one max_lr for all (PyTorch's float max_lr), so every group follows the
// same lr (and momentum) curve.
//
// state_dict: the base entries, total_steps, _schedule_phases.end_step (one per phase),
// _anneal_func_type (0 "cos", 1 "linear"), cycle_momentum, use_beta1, and the values
// PyTorch keeps in the param_group: initial_lr, max_lr, min_lr, base_momentum, max_momentum.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <ember/nn/lr_scheduler.h>

namespace ember::optim::lr_scheduler {

struct OneCycleOptions {
  double pct_start = 0.3;
  std::string anneal_strategy = "cos";  // "cos" or "linear"
  bool cycle_momentum = true;
  double base_momentum = 0.85;
  double max_momentum = 0.95;
  double div_factor = 25.0;
  double final_div_factor = 1e4;
  bool three_phase = false;
};

class OneCycleLR : public LRScheduler {
 public:
  // PyTorch's checks and messages ("Expected positive integer total_steps, but got 0", ...).
  OneCycleLR(Optimizer& optimizer, double max_lr, std::int64_t total_steps, OneCycleOptions options = {});
  std::string name() const override { return "OneCycleLR"; }
  std::int64_t total_steps() const { return total_steps_; }
  void restore_optimizer_values() override;

 protected:
  double get_lr(std::size_t group) override;
  void save_entries(StateDict& state) const override;
  void load_entries(StateReader& reader) override;

 private:
  // The lr and momentum of step `step_num` ("Tried to step N times..." past total_steps).
  std::pair<double, double> values_at(std::int64_t step_num) const;
  double anneal(double start, double end, double pct) const;

  std::int64_t total_steps_;
  std::vector<double> phase_end_steps_;
  bool anneal_cos_ = true;
  bool cycle_momentum_ = true;
  bool use_beta1_ = false;
  double initial_lr_ = 0, max_lr_ = 0, min_lr_ = 0;
  double base_momentum_ = 0, max_momentum_ = 0;
};

}  // namespace ember::optim::lr_scheduler
