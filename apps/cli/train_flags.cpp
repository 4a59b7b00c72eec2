// apps/cli/train_flags.cpp — groups of `ember train` flags (see train_flags.h).
#include "train_flags.h"

#include <string>

#include "flag_checks.h"
#include "model.h"
#include "monitor.h"

namespace ember::cli {

void add_model_data_options(CLI::App& command, TrainOptions& train) {
  command.add_option("--num-classes", train.data.num_classes,
                     "Number of classes (labels must lie in [0, N); default: the largest label + 1)")
      ->check(whole_number_in(1, kMaxLayerWidth));
  command.add_option("--input-scale", train.data.input_scale,
                     "Features are multiplied by this (default 1/255 for IDX images, 1 for CSV and toy)")
      ->check(real_number(false));
  command.add_flag_callback("--no-stop-on-nan", [&train] { train.stop_on_nan = false; },
                            "Keep training when the loss becomes nan or inf (default: stop with an error)");
}

// Early stopping and checkpoints (issue 20): --save-every, --save-best, --early-stop, --min-delta.
void add_checkpoint_options(CLI::App& command, TrainOptions& train) {
  command.add_option("--save-every", train.save_every,
                     "Also write --save every N optimiser steps inside an epoch (exact --resume from there)")
      ->check(whole_number_at_least(1));
  command.add_option("--save-best", train.save_best_path,
                     "Keep the model of the best epoch so far (by --monitor) in this checkpoint");
  command.add_option("--early-stop", train.early_stop_patience,
                     "Stop when --monitor has not improved by more than --min-delta for N epochs")
      ->check(whole_number_at_least(1));
  command.add_option("--min-delta", train.min_delta,
                     "Early stopping and --save-best: the least change that counts as an improvement (default 0)")
      ->check(real_number(/*allow_zero=*/true));
}

// The combinations of those flags that mean nothing.
void check_checkpoint_options(const TrainOptions& train, const CLI::App& command) {
  if (train.save_every > 0 && train.save_path.empty()) {
    throw CLI::ValidationError("--save-every", "needs --save PATH (the checkpoint it writes)");
  }
  if (command.count("--min-delta") > 0 && train.early_stop_patience == 0 && train.save_best_path.empty()) {
    throw CLI::ValidationError("--min-delta", "only means something with --early-stop or --save-best");
  }
}

// --- Learning-rate schedules and gradients (issue 20; lr_schedule.h, optimizer_step.h) ---
void add_schedule_options(CLI::App& command, TrainOptions& train) {
  command.add_option("--lr-schedule", train.lr_schedule,
                     "constant (default), step, multistep, exponential (per epoch), cosine, onecycle (per optimizer "
                     "step) or plateau (per epoch, on --monitor)")
      ->check(CLI::IsMember({"constant", "step", "multistep", "exponential", "cosine", "onecycle", "plateau"}));
  command.add_option("--lr-step-size", train.lr_step_size, "step: epochs between decays by --lr-gamma")
      ->check(whole_number_at_least(1));
  command.add_option("--lr-gamma", train.lr_gamma,
                     "step, multistep, exponential: the decay factor; plateau: the reduction factor (default 0.1)")
      ->check(real_number(false));
  command.add_option("--lr-milestones", train.lr_milestones, "multistep: increasing epochs at which lr *= --lr-gamma")
      ->delimiter(',')
      ->check(whole_number_at_least(1));
  command.add_option("--lr-min", train.lr_min, "cosine: the final lr (eta_min); plateau: the lowest lr (min_lr)")
      ->check(real_number(true));
  command.add_option("--lr-patience", train.lr_patience, "plateau: epochs without improvement before a reduction")
      ->check(whole_number_at_least(0));
  command.add_option("--warmup-steps", train.warmup_steps,
                     "The lr rises linearly over the first N optimizer steps (before cosine; chained with "
                     "the per-epoch schedules; not with onecycle)")
      ->check(whole_number_at_least(0));
  command.add_option("--clip-grad-norm", train.clip_grad_norm,
                     "Scale the gradients so that their total 2-norm is at most MAX (clip_grad_norm_)")
      ->check(real_number(false));
  command.add_option("--clip-grad-value", train.clip_grad_value,
                     "Clamp every gradient element into [-V, V] (clip_grad_value_)")
      ->check(real_number(false));
  command.add_option("--grad-accum", train.grad_accum,
                     "Accumulate the gradients of N micro-batches of --batch-size per optimizer step (loss / N)")
      ->check(whole_number_in(1, kMaxBatchSize));
}

// Which schedule flags go with which --lr-schedule; combinations PyTorch refuses.
void check_schedule_options(const CLI::App& command, const TrainOptions& train) {
  const std::string& kind = train.lr_schedule;
  auto only_with = [&](const char* flag, std::initializer_list<const char*> kinds, const char* which) {
    if (command.count(flag) == 0) return;
    for (const char* allowed : kinds) {
      if (kind == allowed) return;
    }
    throw CLI::ValidationError(flag, std::string("only --lr-schedule ") + which + " takes it (got " + kind + ")");
  };
  only_with("--lr-step-size", {"step"}, "step");
  only_with("--lr-gamma", {"step", "multistep", "exponential", "plateau"}, "step, multistep, exponential or plateau");
  only_with("--lr-milestones", {"multistep"}, "multistep");
  only_with("--lr-min", {"cosine", "plateau"}, "cosine or plateau");
  only_with("--lr-patience", {"plateau"}, "plateau");
  if (kind == "step" && command.count("--lr-step-size") == 0) {
    throw CLI::ValidationError("--lr-schedule", "step needs --lr-step-size (epochs between decays)");
  }
  if (kind == "multistep") {
    if (train.lr_milestones.empty()) throw CLI::ValidationError("--lr-schedule", "multistep needs --lr-milestones");
    for (std::size_t i = 1; i < train.lr_milestones.size(); ++i) {
      if (train.lr_milestones[i] <= train.lr_milestones[i - 1]) {
        throw CLI::ValidationError("--lr-milestones", "must be increasing, got " + std::to_string(train.lr_milestones[i]) +
                                                          " after " + std::to_string(train.lr_milestones[i - 1]));
      }
    }
  }
  if (kind == "plateau" && train.lr_gamma >= 1.0) {
    throw CLI::ValidationError("--lr-gamma", "plateau: the factor must be below 1 (Factor should be < 1.0.)");
  }
  if (train.warmup_steps > 0 && kind == "onecycle") {
    throw CLI::ValidationError("--warmup-steps", "does not go with --lr-schedule onecycle (onecycle has its own warm-up phase)");
  }
  if (command.count("--clip-grad-norm") > 0 && command.count("--clip-grad-value") > 0) {
    throw CLI::ValidationError("--clip-grad-value", "use either --clip-grad-norm or --clip-grad-value, not both");
  }
}

}  // namespace ember::cli
