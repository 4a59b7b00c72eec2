// apps/cli/optimizer_step.cpp — accumulation, clipping, the optimizer step (see optimizer_step.h).
#include "optimizer_step.h"

#include <ember/autograd/ops.h>
#include <ember/distributed/ddp.h>
#include <ember/nn/clip_grad.h>

namespace ember::cli {

OptimizerStepper::OptimizerStepper(const TrainOptions& options, optim::Optimizer& optimizer, nn::Module& trained,
                                   LrSchedule& schedule)
    : options_(options),
      optimizer_(optimizer),
      trained_(trained),
      schedule_(schedule),
      grad_scaler_({.enabled = options.precision == "fp16"}) {}

std::optional<OptimizerStepper::Stepped> OptimizerStepper::backward(const Tensor& loss, bool last_batch_of_epoch,
                                                                    bool want_grad_norm) {
  const std::int64_t accumulate = options_.grad_accum;
  if (micro_batches_ == 0) optimizer_.zero_grad();
  ++micro_batches_;
  const bool steps_now = micro_batches_ == accumulate || last_batch_of_epoch;
  {
    // The group's earlier micro-batches only accumulate locally: the all-reduce runs once,
    // in the backward of its last one (DDP's hooks then average the summed gradients).
    auto* ddp = dynamic_cast<distributed::DistributedDataParallel*>(&trained_);
    std::optional<distributed::DistributedDataParallel::NoSyncGuard> no_sync;
    if (ddp != nullptr && !steps_now) no_sync.emplace(*ddp);
    // --precision fp16: the loss is scaled before backward (amp::GradScaler; a no-op otherwise).
    if (accumulate > 1) {
      grad_scaler_.scale(loss.div(static_cast<double>(accumulate))).backward();
    } else {
      grad_scaler_.scale(loss).backward();
    }
  }
  if (!steps_now) return std::nullopt;
  micro_batches_ = 0;

  Stepped stepped;
  const std::vector<Tensor>& parameters = optimizer_.parameters();
  grad_scaler_.unscale_(optimizer_);  // the true gradients, before their norm and clipping
  if (options_.clip_grad_norm > 0) {
    // Device-side; read back (a synchronisation) only for a step that is logged.
    Tensor norm = nn::utils::clip_grad_norm_(parameters, options_.clip_grad_norm);
    if (want_grad_norm) stepped.grad_norm = norm.item<double>();
  } else if (want_grad_norm) {
    stepped.grad_norm = nn::utils::get_total_norm(nn::utils::gradients_of(parameters)).item<double>();
  }
  if (options_.clip_grad_value > 0) nn::utils::clip_grad_value_(parameters, options_.clip_grad_value);
  stepped.lr = optimizer_.learning_rate();
  grad_scaler_.step(optimizer_);  // skipped when a float16 gradient overflowed
  grad_scaler_.update();
  schedule_.after_optimizer_step();
  return stepped;
}

}  // namespace ember::cli
