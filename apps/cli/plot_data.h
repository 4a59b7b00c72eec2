// apps/cli/plot_data.h — `ember plot`: the metrics logs read back, and the series to draw.
//
// A log is the JSON-lines file of `ember train --log` (metrics_log.h). Reading keeps every
// number of its step and epoch events by name, so fields that later versions add (lr,
// grad_norm, val_loss, ...) are plotted when present and skipped when absent; null (no
// validation set, a non-finite loss) is an absent value. A line that is not a JSON object,
// or a step/epoch event without its integer "step"/"epoch", is an IOError naming the file
// and the line: a plot must not quietly leave data out.
//
// The figure's panels: loss (per-step loss, epoch train loss, validation loss), accuracy
// (train, validation, in percent), learning rate, gradient norm; a panel no run has data
// for is left out. The x axis is the optimiser step when every run logged step events
// (--log-every) or is a GPT's: epoch values then sit at their epoch's last step. Otherwise
// it is the epoch, and logged steps sit at fractions of their epoch. A GPT's log (--model
// gpt) has step events without an epoch and "eval" events (train and validation loss
// estimates at a step), drawn as "train (estimate)" and "validation" at their steps.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ember::cli {

// One step or epoch event of a log.
struct LogRecord {
  std::int64_t epoch = 0;             // 1-based
  std::optional<std::int64_t> step;   // a step event's step; an epoch event's last step, when logged
  std::map<std::string, double> values;  // every number of the event but epoch and step
};

struct RunLog {
  std::string name;  // the file name without its directory and extension: the legend's label
  std::string path;
  std::vector<LogRecord> steps, epochs;  // epochs: also a GPT's eval events, in order
  bool steps_only = false;  // a GPT's log: no epochs, evaluations placed by their step
};

// Reads one log. IOError "PATH:LINE: ..." for a missing or unreadable file, a malformed line,
// or a log without any step or epoch event.
RunLog read_run_log(const std::string& path);

enum class XAxisKind { Step, Epoch };

// How a series is drawn: PerStep a thin line of every logged step; Train a solid line with
// a marker per point; Validation the same, dashed.
enum class SeriesStyle { PerStep, Train, Validation };

struct Point {
  double x = 0, y = 0;
};

struct Series {
  std::size_t run = 0;  // index into the runs (its colour)
  std::string label;    // "loss (per step)", "train", "validation", ...
  SeriesStyle style = SeriesStyle::Train;
  std::vector<Point> points;  // in x order
};

struct PanelData {
  std::string title, y_label;
  bool log_y = false;
  std::vector<Series> series;
};

struct FigureData {
  XAxisKind x_kind = XAxisKind::Epoch;
  std::vector<std::string> run_names;
  std::vector<PanelData> panels;
};

// The figure for these runs; `log_loss` puts the loss panel on a logarithmic axis.
FigureData figure_data(const std::vector<RunLog>& runs, bool log_loss);

}  // namespace ember::cli
