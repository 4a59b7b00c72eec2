// apps/cli/lr_schedule.h — `ember train --lr-schedule ...`: the optim::lr_scheduler a run
// uses, built from the flags, and when it steps.
//
//   constant     no scheduler (with --warmup-steps: LinearLR alone, per optimizer step)
//   step         StepLR(step_size=--lr-step-size, gamma=--lr-gamma), per epoch
//   multistep    MultiStepLR(milestones=--lr-milestones, gamma=--lr-gamma), per epoch
//   exponential  ExponentialLR(gamma=--lr-gamma), per epoch
//   cosine       CosineAnnealingLR(T_max=optimizer steps after the warm-up, eta_min=--lr-min), per step
//   onecycle     OneCycleLR(max_lr=--lr, total_steps=optimizer steps) with PyTorch's other
//                defaults, per step; it cycles SGD's momentum only when --momentum > 0
//                (else the run would gain a momentum it was not given) and Adam's beta1
//   plateau      ReduceLROnPlateau(mode from --monitor, factor=--lr-gamma,
//                patience=--lr-patience, min_lr=--lr-min), per epoch, on the monitored value
//   --warmup-steps N: LinearLR(start_factor=1/N, end_factor=1, total_iters=N-1), per step;
//                with cosine, then the schedule through SequentialLR at milestone N; with
//                step, multistep, exponential and plateau, chained (both on the optimizer,
//                each stepped at its own cadence, as PyTorch chains schedulers); onecycle
//                has its own warm-up and refuses one.
// "Per step" means after every optimizer step (one per --grad-accum micro-batches), as in
// PyTorch's `optimizer.step(); scheduler.step()`; "per epoch" after the epoch's evaluation.
// The optimizer steps of a run: epochs x ceil(batches per epoch / --grad-accum).
// tests/reference/gen_cli_schedules.py is the same loop in PyTorch.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <ember/nn/lr_scheduler.h>

#include "metrics_log.h"
#include "options.h"

namespace ember::cli {

// Optimizer steps per epoch: an epoch's last, incomplete accumulation group steps too.
std::int64_t optimizer_steps_per_epoch(std::int64_t batches_per_epoch, std::int64_t grad_accum);

// The run header's line for the schedule and gradient flags ("lr schedule cosine, warm-up
// 100 steps, grad accum 4, clip grad norm 1"); empty when none is given.
std::string describe_schedule(const TrainOptions& options);

class LrSchedule {
 public:
  LrSchedule() = default;  // constant: nothing to do
  // Builds the scheduler on `optimizer` (which already has --lr). UsageError when the
  // flags leave the schedule no step (a warm-up as long as the whole run).
  LrSchedule(const TrainOptions& options, optim::Optimizer& optimizer, std::int64_t steps_per_epoch);

  void after_optimizer_step();                    // per-step schedules step
  void after_epoch(const EpochMetrics& metrics);  // per-epoch schedules step
  bool active() const { return scheduler_ != nullptr; }
  // For the checkpoint ("scheduler.<key>" tensors; empty for constant).
  nn::StateDict state_dict() const;
  // --resume: the scheduler's state, and the lr (and OneCycleLR's momentum) it had set put
  // back into the optimizer, whose hyper-parameters come from the command line.
  void load_state_dict(const nn::StateDict& state);

 private:
  static constexpr const char* kWarmupPrefix = "warmup.";
  static constexpr const char* kChainedLrKey = "chained_lr";
  optim::Optimizer* optimizer_ = nullptr;
  std::unique_ptr<optim::lr_scheduler::LRScheduler> scheduler_;
  std::unique_ptr<optim::lr_scheduler::LRScheduler> warmup_;  // chained before a per-epoch schedule
  bool per_step_ = false;
  Monitor monitor_ = Monitor::TrainLoss;
};

}  // namespace ember::cli
