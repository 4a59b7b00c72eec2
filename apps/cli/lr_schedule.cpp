// apps/cli/lr_schedule.cpp — the --lr-schedule scheduler (see lr_schedule.h).
#include "lr_schedule.h"

#include <ember/core/error.h>
#include <ember/nn/lr_one_cycle.h>
#include <ember/nn/lr_plateau.h>

#include "monitor.h"
#include "usage_error.h"

namespace ember::cli {

namespace lr = optim::lr_scheduler;

std::int64_t optimizer_steps_per_epoch(std::int64_t batches_per_epoch, std::int64_t grad_accum) {
  return (batches_per_epoch + grad_accum - 1) / grad_accum;
}

namespace {

std::unique_ptr<lr::LRScheduler> main_schedule(const TrainOptions& options, optim::Optimizer& optimizer,
                                               std::int64_t total_steps) {
  const std::string& kind = options.lr_schedule;
  if (kind == "step") return std::make_unique<lr::StepLR>(optimizer, options.lr_step_size, options.lr_gamma);
  if (kind == "multistep") return std::make_unique<lr::MultiStepLR>(optimizer, options.lr_milestones, options.lr_gamma);
  if (kind == "exponential") return std::make_unique<lr::ExponentialLR>(optimizer, options.lr_gamma);
  if (kind == "cosine") {
    const std::int64_t after_warmup = total_steps - options.warmup_steps;
    if (after_warmup < 1) {
      throw UsageError(make_message("--warmup-steps ", options.warmup_steps, " leaves no step for --lr-schedule cosine (",
                                    total_steps, " optimizer steps in all)"));
    }
    return std::make_unique<lr::CosineAnnealingLR>(optimizer, after_warmup, options.lr_min);
  }
  if (kind == "onecycle") {
    lr::OneCycleOptions one_cycle;
    // PyTorch would give a momentum-free SGD momentum 0.95: only cycle one the run has.
    one_cycle.cycle_momentum = options.optimizer != "sgd" || options.hyperparameters.momentum > 0;
    return std::make_unique<lr::OneCycleLR>(optimizer, options.hyperparameters.lr, total_steps, one_cycle);
  }
  if (kind == "plateau") {
    lr::ReduceLROnPlateauOptions plateau;
    plateau.mode = higher_is_better(options.monitor) ? "max" : "min";
    plateau.factor = options.lr_gamma;
    plateau.patience = options.lr_patience;
    plateau.min_lr = options.lr_min;
    return std::make_unique<lr::ReduceLROnPlateau>(optimizer, plateau);
  }
  return nullptr;  // constant
}

}  // namespace

LrSchedule::LrSchedule(const TrainOptions& options, optim::Optimizer& optimizer, std::int64_t steps_per_epoch)
    : monitor_(options.monitor) {
  const std::string& kind = options.lr_schedule;
  per_step_ = kind == "cosine" || kind == "onecycle" || options.warmup_steps > 0;
  const std::int64_t total_steps = options.epochs * steps_per_epoch;
  if (options.warmup_steps == 0) {
    scheduler_ = main_schedule(options, optimizer, total_steps);
    return;
  }
  const auto n = options.warmup_steps;
  auto warmup = std::make_unique<lr::LinearLR>(optimizer, 1.0 / static_cast<double>(n), 1.0, n - 1);
  if (kind == "constant") {
    scheduler_ = std::move(warmup);
    return;
  }
  std::vector<std::unique_ptr<lr::LRScheduler>> parts;
  parts.push_back(std::move(warmup));
  parts.push_back(main_schedule(options, optimizer, total_steps));
  scheduler_ = std::make_unique<lr::SequentialLR>(optimizer, std::move(parts), std::vector<std::int64_t>{n});
}

void LrSchedule::after_optimizer_step() {
  if (scheduler_ && per_step_) scheduler_->step();
}

void LrSchedule::after_epoch(const EpochMetrics& metrics) {
  if (!scheduler_ || per_step_) return;
  if (auto* plateau = dynamic_cast<lr::ReduceLROnPlateau*>(scheduler_.get())) {
    plateau->step(monitored_value(metrics, monitor_));
  } else {
    scheduler_->step();
  }
}

nn::StateDict LrSchedule::state_dict() const { return scheduler_ ? scheduler_->state_dict() : nn::StateDict(); }

void LrSchedule::load_state_dict(const nn::StateDict& state) {
  if (!scheduler_) return;
  scheduler_->load_state_dict(state);
  scheduler_->restore_optimizer_values();
}

}  // namespace ember::cli
