// apps/cli/early_stopping_run.h — early stopping and --save-best inside `ember train`: the
// rule of early_stopping.h applied to a run (which rank decides, what is logged and said).
//
// Rank 0 alone has the validation metrics (distributed_mode.h), so rank 0 applies the rule
// and every rank learns its decision through one all-reduce; the run stops after the same
// epoch everywhere. The stop is told three ways: the summary's "early stopping:" line, an
// {"event": "early_stop", ...} line in the --log, and the exit code 0 (a stop by the rule
// is a finished run).
#pragma once

#include <string>

#include "checkpoint.h"
#include "training_run.h"

namespace ember::cli {

// run.early_stopping from the options (--early-stop or --save-best; otherwise none), and
// from a --resume checkpoint's state (`resumed`, may be null): the count continues, unless
// the checkpoint tracked another --monitor (a warning; the rule starts afresh). A resumed
// run whose rule already says stop trains no further epoch.
void set_up_early_stopping(TrainingRun& run, const Checkpoint* resumed);

// After each epoch's metrics: applies the rule on rank 0 and returns whether this epoch
// is the best so far (rank 0 then writes --save-best); sets run.stopped_early on every
// rank, logging the early_stop event.
bool early_stopping_after_epoch(TrainingRun& run, const EpochMetrics& metrics);

// The summary's lines (empty when the flags are not used):
//   "early stopping:  after epoch 7 of 20: val_loss did not improve by more than 0 for 3 epochs (best 0.41 at epoch 4)"
//   "best checkpoint: best.st (epoch 4, val_loss 0.41)"
std::string early_stopping_summary(const TrainingRun& run);
std::string best_checkpoint_summary(const TrainingRun& run);

}  // namespace ember::cli
