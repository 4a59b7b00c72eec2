// apps/cli/optimizer_step.h — what `ember train` does with each micro-batch's loss:
// gradient accumulation (--grad-accum), clipping (--clip-grad-norm / --clip-grad-value),
// the optimizer step and the per-step learning-rate schedule.
//
// PyTorch users' accumulation loop, which this is:
//   (loss / N).backward()                       # every micro-batch; under DDP the first
//                                               # N-1 of a group inside ddp.no_sync()
//   if (i + 1) % N == 0 or i is the epoch's last batch:
//       clip_grad_norm_(params, MAX)            # or clip_grad_value_(params, V)
//       optimizer.step(); scheduler.step(); optimizer.zero_grad()
// (ember zeroes at a group's first micro-batch, which is the same.) An epoch's last group
// may be shorter than N; its loss is still divided by N, as in that loop. With N = 1 the
// loss is not divided at all, so a run without --grad-accum is the tutorial's §7 loop exactly.
#pragma once

#include <cstdint>
#include <optional>

#include <ember/core/tensor.h>
#include <ember/nn/grad_scaler.h>
#include <ember/nn/module.h>
#include <ember/nn/optimizer.h>

#include "lr_schedule.h"
#include "options.h"

namespace ember::cli {

class OptimizerStepper {
 public:
  // trained: the model the loss came from (DistributedDataParallel when distributed).
  OptimizerStepper(const TrainOptions& options, optim::Optimizer& optimizer, nn::Module& trained,
                   LrSchedule& schedule);

  // What an optimizer step used: its lr, and the gradients' total 2-norm before clipping
  // (computed when clipping by norm, or when asked for: a device reduction and one read).
  struct Stepped {
    double lr = 0;
    std::optional<double> grad_norm;
  };
  // Backward of one micro-batch's loss; after the group's last micro-batch (or the epoch's
  // last batch) the optimizer steps: then the step's lr and grad norm, else nullopt.
  // want_grad_norm: compute the norm for this step even without --clip-grad-norm.
  std::optional<Stepped> backward(const Tensor& loss, bool last_batch_of_epoch, bool want_grad_norm);
  // Micro-batches in the group so far (0 at a step boundary).
  std::int64_t pending_micro_batches() const { return micro_batches_; }
  // --precision fp16's loss scaler (disabled otherwise): its state goes into checkpoints.
  amp::GradScaler& grad_scaler() { return grad_scaler_; }
  const amp::GradScaler& grad_scaler() const { return grad_scaler_; }

 private:
  const TrainOptions& options_;
  optim::Optimizer& optimizer_;
  nn::Module& trained_;
  LrSchedule& schedule_;
  std::int64_t micro_batches_ = 0;
  amp::GradScaler grad_scaler_;
};

}  // namespace ember::cli
