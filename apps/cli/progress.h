// apps/cli/progress.h — what `ember train` shows while it trains.
//
// On a terminal: one progress line redrawn in place (epoch, batch, running loss,
// samples/s, ETA). When stdout is a file or a pipe (CI logs, tests): plain lines, about ten
// per epoch and one per batch for tiny data sets, in the tutorial's §7 format
//   Epoch: 001/003 | Batch 000/002 | Train Loss: 0.75 | 2345 samples/s | ETA 0:00:01
// so the toy run prints exactly the tutorial's losses. --quiet shows nothing.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace ember::cli {

// Seconds as "H:MM:SS".
std::string format_duration(double seconds);

class ProgressReporter {
 public:
  enum class Style { Bar, Lines, Quiet };
  // Bar when stdout is a terminal, Lines otherwise (Quiet when quiet).
  static Style detect_style(bool quiet);

  ProgressReporter(Style style, std::int64_t epochs, std::int64_t batches_per_epoch);

  void start_epoch(std::int64_t epoch);  // 0-based
  // After each optimiser step: the batch index within the epoch, its loss and size.
  void batch_done(std::int64_t batch, double loss, std::int64_t batch_examples);
  // After the epoch: ends the bar and prints the epoch's summary line (val_loss and
  // val_acc NaN: no validation split).
  void end_epoch(double train_loss, double train_acc, double val_loss, double val_acc, double samples_per_s);

 private:
  void draw_bar(std::int64_t batch, bool force);

  Style style_;
  std::int64_t epochs_;
  std::int64_t batches_per_epoch_;
  std::int64_t line_every_;  // Lines style: print every N batches
  std::int64_t epoch_ = 0;
  std::int64_t epoch_examples_ = 0;
  double loss_sum_ = 0.0;  // running (mean) loss of this epoch, for the bar
  std::int64_t loss_count_ = 0;
  double last_loss_ = 0.0;
  std::chrono::steady_clock::time_point epoch_start_;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace ember::cli
