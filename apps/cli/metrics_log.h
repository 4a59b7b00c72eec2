// apps/cli/metrics_log.h — `ember train --log FILE.jsonl`: one JSON object per line.
//
//   {"event": "step", "epoch": 1, "step": 100, "loss": 0.6931471824645996, "lr": 0.1,
//    "grad_norm": 1.25}
//   (lr: the rate that optimizer step used; grad_norm: the gradients' total 2-norm before
//   any clipping; loss: with --grad-accum the mean of the step's micro-batch losses)
//   {"event": "epoch", "epoch": 1, "train_loss": ..., "train_acc": ..., "val_loss": ..., "val_acc": ...,
//    "samples_per_s": ..., "elapsed_s": ..., "step": 1875}   (step: the epoch's last step)
//   {"event": "summary", "train_acc": ..., "val_acc": ..., "test_acc": ..., "elapsed_s": ...,
//    "device": "cpu"}
// Epochs are 1-based, steps count optimiser steps from the start of training (so they keep
// counting across a --resume). A metric that does not exist (no validation set) is null.
// Losses are written with every digit of the float32 they came from, so a log can be
// compared with PyTorch's numbers exactly (tests/apps/test_cli_parity.cpp does).
// Lines are flushed as written: a log of an interrupted run is complete up to the stop.
// A write that fails (a full disk, --log /dev/full) is an IOError naming the log and the
// reason: the run stops with exit code 1 rather than train on with a log that lies.
//
// --resume: the log continues where the checkpoint's run stood. The interrupted run went on
// logging after its last checkpoint (the steps of the unfinished epoch), and a finished run
// ended with a summary; neither belongs to the resumed run's history. So the log is cut back
// to the lines of epochs <= the checkpoint's epoch and steps <= its step (everything after
// the first line that is not is removed, with a note on stderr) before new lines are
// appended: the log of an interrupted and resumed run has the lines of an uninterrupted one,
// with no step twice. A log that is not a regular file (a FIFO, /dev/stdout) is appended to.
//
// Sinks (--tensorboard, tensorboard_writer.h) receive every line as it is written, also
// when there is no --log file; `ember plot` (plot_data.h) reads the file back.
#pragma once

#include <cstdint>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ember::cli {

struct EpochMetrics {
  std::int64_t epoch = 0;  // 1-based
  double train_loss = 0, train_acc = 0;
  double val_loss = 0, val_acc = 0;  // val_loss: mean cross-entropy over the validation split
  bool has_val = false;
  double samples_per_s = 0, elapsed_s = 0;
  double lr = 0;  // the rate of the epoch's last optimizer step (--lr-schedule)
  std::int64_t step = 0;  // optimiser steps at the epoch's end (the x of its values in plots)
};

struct SummaryMetrics {
  double train_acc = 0, val_acc = 0, test_acc = 0;
  bool has_val = false, has_test = false;
  double elapsed_s = 0;
  std::string device;
};

class MetricsLog {
 public:
  MetricsLog() = default;  // disabled: every call does nothing
  // Opens `path`, emptied for a fresh run (resumed_epoch 0), or, for a run resumed from a
  // checkpoint of `resumed_epoch` epochs and `resumed_step` steps, cut back to that point
  // (see above) and appended to. IOError when it cannot.
  // resumed_batch: a mid-epoch checkpoint's batch in epoch resumed_epoch + 1 (--save-every).
  MetricsLog(const std::string& path, std::int64_t resumed_epoch, std::int64_t resumed_step,
             std::int64_t resumed_batch = 0);

  bool enabled() const { return file_.is_open() || !sinks_.empty(); }
  // Also hands every line (one JSON object, no newline) to `sink`.
  using Sink = std::function<void(const std::string& json_line)>;
  void add_sink(Sink sink) { sinks_.push_back(std::move(sink)); }
  void step(std::int64_t epoch, std::int64_t step, float loss, double lr, std::optional<double> grad_norm);
  void epoch(const EpochMetrics& metrics);
  void summary(const SummaryMetrics& metrics);
  // --model gpt (gpt_training.h): steps without epochs, evaluations, and the summary of a
  // language model (losses, no accuracy; tokens_per_s over the training steps' time).
  void gpt_step(std::int64_t step, float loss, double lr, double tokens_per_s);
  void gpt_eval(std::int64_t step, double train_loss, double val_loss, double tokens_per_s, double elapsed_s);
  void gpt_summary(double train_loss, double val_loss, double tokens_per_s, double elapsed_s, std::int64_t steps,
                   const std::string& device);
  // --early-stop ended the run after `epoch` (early_stopping.h):
  //   {"event": "early_stop", "epoch": 7, "monitor": "val_loss", "best": 0.41, "best_epoch": 4,
  //    "patience": 3, "min_delta": 0}
  void early_stop(std::int64_t epoch, const std::string& monitor, double best, std::int64_t best_epoch,
                  std::int64_t patience, double min_delta);

 private:
  void write_line(const std::string& line);  // IOError when the write fails
  std::string path_;
  std::ofstream file_;
  std::vector<Sink> sinks_;
};

}  // namespace ember::cli
