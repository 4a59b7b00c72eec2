// apps/cli/early_stopping.h — `ember train --early-stop PATIENCE --min-delta D` and the
// "best so far" of `--save-best`: the stopping rule, apart from the loop and the CLI.
//
// The rule is Keras's EarlyStopping (keras.callbacks.EarlyStopping, restore_best_weights
// off, no baseline), which Lightning's EarlyStopping callback shares for these settings:
//   - the monitored value improves when it beats the best so far by more than min_delta:
//     value < best - min_delta for a loss (mode min), value > best + min_delta for an
//     accuracy (mode max). The first epoch always improves (best starts at +-inf); nan
//     never does (a comparison with nan is false, as in Keras).
//   - each epoch without an improvement counts one more "wait"; an improvement resets it
//     to 0 and makes this epoch the best one;
//   - training stops after the epoch whose wait reaches PATIENCE: PATIENCE epochs in a row
//     without an improvement. (As in Keras and Lightning, the count goes up before the
//     check, so the run always trains at least PATIENCE epochs past its best one.)
// --save-best writes the model after every epoch that improved, by the same rule, so the
// best checkpoint is the epoch early stopping counts its patience from.
// The state (best value, its epoch, the wait) is in every checkpoint (checkpoint.h), so a
// --resume continues the count; resuming with a larger --early-stop trains on.
#pragma once

#include <cstdint>
#include <string>

namespace ember::cli {

// min: a loss, lower is better; max: an accuracy, higher is better.
enum class MonitorMode { Min, Max };

// What a checkpoint records of the rule (metadata "early_stopping").
struct EarlyStoppingState {
  std::string monitor;      // "val_loss", "val_acc", "train_loss": the value it was tracking
  double best = 0;          // the best value so far (+-inf: no epoch yet)
  std::int64_t best_epoch = 0;  // 1-based; 0: none yet
  std::int64_t wait = 0;        // epochs since the best one
};

class EarlyStopping {
 public:
  // patience 0: never stops (only tracks the best, for --save-best).
  EarlyStopping(std::string monitor, MonitorMode mode, std::int64_t patience, double min_delta);

  // The value of `monitor` after `epoch` (1-based). Returns whether it improved (the
  // epoch is now the best one).
  bool update(std::int64_t epoch, double value);
  // Whether the wait has reached the patience (training stops after this epoch).
  bool should_stop() const { return patience_ > 0 && state_.wait >= patience_; }

  const EarlyStoppingState& state() const { return state_; }
  // Continues a checkpoint's count; a state of another monitor is ignored (returns false:
  // its best value means nothing for this one).
  bool restore(const EarlyStoppingState& saved);

  const std::string& monitor() const { return state_.monitor; }
  MonitorMode mode() const { return mode_; }
  std::int64_t patience() const { return patience_; }
  double min_delta() const { return min_delta_; }

 private:
  MonitorMode mode_;
  std::int64_t patience_;
  double min_delta_;
  EarlyStoppingState state_;
};

// The state as the checkpoint's "early_stopping" metadata (JSON; values written with every
// digit, inf and nan included) and back. IOError naming `path` when it is damaged.
std::string early_stopping_to_text(const EarlyStoppingState& state);
EarlyStoppingState early_stopping_from_text(const std::string& text, const std::string& path);

}  // namespace ember::cli
