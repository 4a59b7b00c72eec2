// apps/cli/early_stopping_run.cpp — early stopping and --save-best in a run (see early_stopping_run.h).
#include "early_stopping_run.h"

#include <cstdio>
#include <iostream>

#include <ember/core/error.h>

#include "monitor.h"

namespace ember::cli {

namespace {

std::string value_text(double value) {
  char text[40];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

}  // namespace

void set_up_early_stopping(TrainingRun& run, const Checkpoint* resumed) {
  const TrainOptions& options = run.options;
  if (options.early_stop_patience == 0 && options.save_best_path.empty()) return;
  const MonitorMode mode = higher_is_better(options.monitor) ? MonitorMode::Max : MonitorMode::Min;
  run.early_stopping.emplace(monitor_name(options.monitor), mode, options.early_stop_patience, options.min_delta);
  if (resumed == nullptr || !resumed->early_stopping) return;
  if (!run.early_stopping->restore(*resumed->early_stopping) && run.distributed.is_main()) {
    std::cerr << "ember: warning: --resume " << options.resume_path << " tracked "
              << resumed->early_stopping->monitor << " for early stopping and --save-best, this run --monitor "
              << run.early_stopping->monitor() << ": its best value starts afresh\n"
              << std::flush;
  }
  // Resuming a run the rule had stopped (with the same or a smaller patience): stop again.
  if (run.early_stopping->should_stop() && resumed->position.batches_done == 0) {
    run.stopped_early = true;
    run.stopped_after_epoch = resumed->epoch;
  }
}

bool early_stopping_after_epoch(TrainingRun& run, const EpochMetrics& metrics) {
  if (!run.early_stopping) return false;
  EarlyStopping& rule = *run.early_stopping;
  bool improved = false, stop = false;
  if (run.distributed.is_main()) {  // the validation metrics exist on rank 0 only
    improved = rule.update(metrics.epoch, monitored_value(metrics, run.options.monitor));
    stop = rule.should_stop();
  }
  run.stopped_early = run.distributed.any_rank(stop);
  if (run.stopped_early) {
    run.stopped_after_epoch = metrics.epoch;
    run.log.early_stop(metrics.epoch, rule.monitor(), rule.state().best, rule.state().best_epoch, rule.patience(),
                       rule.min_delta());
  }
  return improved;
}

std::string early_stopping_summary(const TrainingRun& run) {
  if (!run.early_stopping || run.early_stopping->patience() == 0) return "";
  const EarlyStopping& rule = *run.early_stopping;
  const EarlyStoppingState& state = rule.state();
  const std::string best = state.best_epoch > 0
                               ? make_message("best ", value_text(state.best), " at epoch ", state.best_epoch)
                               : std::string("no epoch had a finite value");
  if (!run.stopped_early) {
    return make_message("not triggered (", rule.monitor(), ": ", best, ", patience ", rule.patience(), ")");
  }
  return make_message("after epoch ", run.stopped_after_epoch, " of ", run.options.epochs, ": ", rule.monitor(),
                      " did not improve by more than ", value_text(rule.min_delta()), " for ", rule.patience(),
                      " epoch", rule.patience() == 1 ? "" : "s", " (", best, ")");
}

std::string best_checkpoint_summary(const TrainingRun& run) {
  if (run.options.save_best_path.empty() || !run.early_stopping) return "";
  const EarlyStoppingState& state = run.early_stopping->state();
  if (run.best_saved_epoch == 0) {
    if (state.best_epoch > 0) {  // the best epoch came before a --resume; its file is as that run left it
      return make_message(run.options.save_best_path, " (not rewritten: the best ", state.monitor, " ",
                          value_text(state.best), " is still epoch ", state.best_epoch, "'s)");
    }
    return make_message("not written (no epoch had a finite ", state.monitor, ")");
  }
  return make_message(run.options.save_best_path, " (epoch ", run.best_saved_epoch, ", ", state.monitor, " ",
                      value_text(state.best), ")");
}

}  // namespace ember::cli
