// apps/cli/lr_schedule.cpp — the --lr-schedule scheduler (see lr_schedule.h).
#include "lr_schedule.h"

#include <cmath>
#include <optional>

#include <ember/core/error.h>
#include <ember/core/factories.h>
#include <ember/nn/lr_one_cycle.h>
#include <ember/nn/lr_plateau.h>

#include "monitor.h"
#include "usage_error.h"

namespace ember::cli {

namespace lr = optim::lr_scheduler;

std::int64_t optimizer_steps_per_epoch(std::int64_t batches_per_epoch, std::int64_t grad_accum) {
  return (batches_per_epoch + grad_accum - 1) / grad_accum;
}

std::string describe_schedule(const TrainOptions& options) {
  std::string text;
  auto add = [&text](const std::string& part) { text += (text.empty() ? "" : ", ") + part; };
  if (options.lr_schedule != "constant") add("lr schedule " + options.lr_schedule);
  if (options.warmup_steps > 0) {
    add(make_message("warm-up ", options.warmup_steps, options.warmup_steps == 1 ? " step" : " steps"));
  }
  if (options.grad_accum > 1) add(make_message("grad accum ", options.grad_accum));
  if (options.clip_grad_norm > 0) add(make_message("clip grad norm ", options.clip_grad_norm));
  if (options.clip_grad_value > 0) add(make_message("clip grad value ", options.clip_grad_value));
  if (options.precision != "fp32") add("precision " + options.precision + " (autocast)");
  return text;
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
    : optimizer_(&optimizer), monitor_(options.monitor) {
  const std::string& kind = options.lr_schedule;
  const bool per_step_kind = kind == "cosine" || kind == "onecycle";
  const std::int64_t total_steps = options.epochs * steps_per_epoch;
  if (options.warmup_steps == 0) {
    per_step_ = per_step_kind;
    scheduler_ = main_schedule(options, optimizer, total_steps);
    return;
  }
  const auto n = options.warmup_steps;
  auto warmup = std::make_unique<lr::LinearLR>(optimizer, 1.0 / static_cast<double>(n), 1.0, n - 1);
  if (kind == "constant") {
    per_step_ = true;
    scheduler_ = std::move(warmup);
    return;
  }
  if (per_step_kind) {  // cosine (onecycle has its own warm-up: the flags refuse both)
    per_step_ = true;
    std::vector<std::unique_ptr<lr::LRScheduler>> parts;
    parts.push_back(std::move(warmup));
    parts.push_back(main_schedule(options, optimizer, total_steps));
    scheduler_ = std::make_unique<lr::SequentialLR>(optimizer, std::move(parts), std::vector<std::int64_t>{n});
    return;
  }
  // A per-epoch schedule: the warm-up is chained with it, as PyTorch chains schedulers — both
  // on the optimizer, the warm-up stepped after every optimizer step, the schedule after every
  // epoch, each scaling the lr the other left (LinearLR's and StepLR's recursive forms). A
  // SequentialLR would count epochs and steps on one clock.
  per_step_ = false;
  warmup_ = std::move(warmup);
  scheduler_ = main_schedule(options, optimizer, total_steps);
}

void LrSchedule::after_optimizer_step() {
  if (warmup_) warmup_->step();
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

// A chained warm-up's entries are kept beside the schedule's, under "warmup.", with the lr
// the optimizer has now: either scheduler may have set it last (the warm-up after a step, the
// schedule after an epoch), so a mid-epoch checkpoint needs it to resume exactly.
nn::StateDict LrSchedule::state_dict() const {
  nn::StateDict state = scheduler_ ? scheduler_->state_dict() : nn::StateDict();
  if (warmup_) {
    for (const auto& [name, tensor] : warmup_->state_dict()) state.insert(std::string(kWarmupPrefix) + name, tensor);
    state.insert(kChainedLrKey, ember::full({}, optimizer_->learning_rate(), kFloat64));
  }
  return state;
}

void LrSchedule::load_state_dict(const nn::StateDict& state) {
  if (!scheduler_) return;
  nn::StateDict own, warmup;
  std::optional<double> chained_lr;
  for (const auto& [name, tensor] : state) {
    if (name == kChainedLrKey) {
      EMBER_CHECK(tensor.numel() == 1 && is_floating_point(tensor.dtype()), IOError,
                  "the checkpoint's scheduler.", kChainedLrKey, " must be one floating-point number");
      chained_lr = tensor.to(kFloat64).item<double>();
      EMBER_CHECK(std::isfinite(*chained_lr) && *chained_lr >= 0, IOError, "the checkpoint's scheduler.", kChainedLrKey,
                  " is ", *chained_lr, ": not a learning rate");
    } else if (name.rfind(kWarmupPrefix, 0) == 0) {
      warmup.insert(name.substr(std::string(kWarmupPrefix).size()), tensor);
    } else {
      own.insert(name, tensor);
    }
  }
  scheduler_->load_state_dict(own);
  if (!warmup_) {
    scheduler_->restore_optimizer_values();
    return;
  }
  warmup_->load_state_dict(warmup);
  EMBER_CHECK(chained_lr.has_value(), IOError, "the checkpoint's scheduler state has no ", kChainedLrKey,
              " (written with another --warmup-steps or --lr-schedule?)");
  optimizer_->set_learning_rate(*chained_lr);
}

}  // namespace ember::cli
