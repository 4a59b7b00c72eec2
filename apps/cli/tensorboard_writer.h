// apps/cli/tensorboard_writer.h — `ember train --tensorboard DIR`: the metrics as TensorBoard
// scalars, so `tensorboard --logdir DIR` shows the run while it trains.
//
// One event file per run, DIR/events.out.tfevents.<unix time>.<hostname> (TensorBoard reads
// every file whose name holds "tfevents"; a second run in the same second gets a ".2"
// suffix). Its records (tensorboard_record.h) hold Event messages (tensorboard_event.proto):
// first {file_version: "brain.Event:2"}, then one Event per metrics event with a Summary of
// simple_value scalars. Every event of the --log schema (metrics_log.h) is turned into
// scalars at a step, by the table in tensorboard_writer.cpp:
//   step events   loss -> loss/train_step, lr -> lr, grad_norm -> grad_norm   (at "step")
//   epoch events  train_loss, val_loss -> loss/train, loss/val; train_acc, val_acc ->
//                 accuracy/train, accuracy/val; samples_per_s; epoch       (at the epoch's last step)
//   summary       train_acc, val_acc, test_acc -> final/...                  (at the last step)
//   eval (gpt)    train_loss, val_loss -> loss/train, loss/val; tokens_per_s  (at its step)
// and any other number an event carries as <event>/<key>, so a field added to the log later
// reaches TensorBoard without a change here. Records are flushed as written.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace ember::cli {

class TensorBoardWriter {
 public:
  // Creates `dir` (and its parents) when missing and starts a new event file in it. IOError
  // when it cannot; NotImplementedError when this build has no libprotobuf (see
  // tensorboard_record.h).
  explicit TensorBoardWriter(const std::string& dir);

  const std::string& path() const { return path_; }
  // One Event at `step` holding these (tag, value) scalars (none: nothing is written).
  void write_scalars(std::int64_t step, const std::vector<std::pair<std::string, double>>& scalars);
  // One line of the metrics log (a JSON object): its numbers as scalars, by the table above.
  void write_metrics_event(const std::string& json_line);

 private:
  void write_record(const std::string& serialized_event);
  std::string path_;
  std::ofstream file_;
  std::int64_t last_step_ = 0;  // the step of epoch events that carry none, and of the summary
};

// The file name TensorBoard writers use: events.out.tfevents.<unix seconds>.<hostname>.
std::string tensorboard_file_name(std::int64_t unix_seconds, const std::string& hostname);

// Refuses, before training starts, a --tensorboard DIR that cannot be one: an existing
// non-directory (UsageError), or a build without TensorBoard support (NotImplementedError).
void check_tensorboard_dir(const std::string& dir);

}  // namespace ember::cli
