// apps/cli/resume_check.h — is a `--resume` really a continuation of the checkpoint's run?
//
// Exact resume (train_command.cpp) restores parameters, optimizer state and generator; the
// result equals an uninterrupted run only if everything else is the same too. So the
// options a checkpoint was trained with (its "config" metadata) are compared with the
// current ones, flag by flag:
//   --data (paths compared after resolving them), --label-column and the CSV header,
//   --val-split, --model (and a CNN's --channels, --input-shape), --hidden, --dropout, --batch-size, --drop-last, --optimizer, --lr,
//   --momentum, --nesterov, --weight-decay, --seed, --input-scale and --num-classes (for
//   the same --data) and the world size (ranks: the effective batch is --batch-size x ranks).
// --epochs is the total and may grow (never fall below the checkpoint's epoch); --workers
// and --device do not change the numbers and may differ. Any difference is an error listing
// each option with both values, unless --allow-config-change asks to continue with the new
// ones (then the differences are printed as a warning).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "options.h"

namespace ember::cli {

// "--lr: checkpoint 0.5, now 0.1", one entry per differing option, in the order above.
std::vector<std::string> config_differences(const TrainOptions& saved, const TrainOptions& current);

// The data options of a --resume run: --input-scale and --num-classes, when not given,
// are the checkpoint's (its preprocessing and class count continue) — for the same --data.
DataOptions with_checkpoint_defaults(DataOptions given, const TrainOptions& saved);

// Whether the --lr-schedule, its flags, --warmup-steps, --grad-accum and (for cosine and
// onecycle, whose length they set) --epochs are the checkpoint's: then its scheduler state
// continues; otherwise (only with --allow-config-change) the schedule starts afresh.
bool same_schedule(const TrainOptions& saved, const TrainOptions& now);

// Throws ValueError when --epochs is below the checkpoint's epoch, or when the options
// differ and !current.allow_config_change. Returns the differences (empty: an exact resume).
std::vector<std::string> check_resume(const TrainOptions& saved, std::int64_t saved_epoch, const TrainOptions& current,
                                      const std::string& checkpoint_path);

}  // namespace ember::cli
