// apps/cli/plot_data.cpp — reads metrics logs and picks the series to plot (see plot_data.h).
#include "plot_data.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include <ember/core/error.h>

namespace ember::cli {

namespace {

// ----------------------------------------------------------------- reading a log

std::int64_t required_integer(const nlohmann::json& entry, const char* key, const std::string& where) {
  const auto found = entry.find(key);
  EMBER_CHECK(found != entry.end() && found->is_number_integer(), IOError, where, ": a ",
              entry["event"].get<std::string>(), " event needs an integer \"", key, "\"");
  return found->get<std::int64_t>();
}

LogRecord parse_record(const nlohmann::json& entry, const std::string& event, const std::string& where) {
  LogRecord record;
  // A GPT's log (--model gpt) counts steps only: its step events have no epoch (0 here).
  if (event != "step" || entry.contains("epoch")) record.epoch = required_integer(entry, "epoch", where);
  if (event == "step" || (entry.contains("step") && !entry["step"].is_null())) {
    record.step = required_integer(entry, "step", where);
  }
  for (const auto& [key, value] : entry.items()) {
    if (key == "event" || key == "epoch" || key == "step" || value.is_null()) continue;
    EMBER_CHECK(value.is_number(), IOError, where, ": \"", key, "\" is not a number (", value.dump(), ")");
    record.values[key] = value.get<double>();
  }
  return record;
}

bool blank(const std::string& line) { return line.find_first_not_of(" \t\r") == std::string::npos; }

// ----------------------------------------------------------------- x coordinates

// The last step of each epoch, where the log tells it: the epoch event's "step", else the
// last logged step of that epoch.
std::map<std::int64_t, std::int64_t> epoch_end_steps(const RunLog& run) {
  std::map<std::int64_t, std::int64_t> ends;
  for (const LogRecord& record : run.steps) {
    std::int64_t& end = ends[record.epoch];
    end = std::max(end, *record.step);
  }
  for (const LogRecord& record : run.epochs) {
    if (record.step) ends[record.epoch] = *record.step;
  }
  return ends;
}

std::optional<double> epoch_x(const LogRecord& record, XAxisKind kind,
                              const std::map<std::int64_t, std::int64_t>& ends) {
  if (kind == XAxisKind::Epoch) return static_cast<double>(record.epoch);
  const auto end = ends.find(record.epoch);
  if (end == ends.end()) return std::nullopt;  // no step is known for it: left out
  return static_cast<double>(end->second);
}

// Each step event's x: its step, or on an epoch axis its place within its epoch.
std::vector<double> step_xs(const RunLog& run, XAxisKind kind, const std::map<std::int64_t, std::int64_t>& ends) {
  std::vector<double> xs;
  std::map<std::int64_t, std::int64_t> count_in_epoch, index_in_epoch;
  for (const LogRecord& record : run.steps) ++count_in_epoch[record.epoch];
  for (const LogRecord& record : run.steps) {
    const double step = static_cast<double>(*record.step);
    if (kind == XAxisKind::Step) {
      xs.push_back(step);
      continue;
    }
    const double epoch_start = static_cast<double>(record.epoch - 1);
    const auto end = ends.find(record.epoch);
    const auto previous = ends.find(record.epoch - 1);
    const double start_step = record.epoch == 1 ? 0.0 : previous != ends.end() ? static_cast<double>(previous->second) : -1.0;
    if (end != ends.end() && start_step >= 0 && static_cast<double>(end->second) > start_step) {
      xs.push_back(epoch_start + (step - start_step) / (static_cast<double>(end->second) - start_step));
    } else {  // the epoch's bounds are unknown: spread its logged steps evenly over it
      const double index = static_cast<double>(++index_in_epoch[record.epoch]);
      xs.push_back(epoch_start + index / static_cast<double>(count_in_epoch[record.epoch]));
    }
  }
  return xs;
}

// ----------------------------------------------------------------- series

struct SeriesSpec {
  bool from_steps;  // step events, else epoch events
  std::string key, label;
  SeriesStyle style;
  double scale = 1.0;  // accuracy: fraction -> percent
  bool unless_run_has_one = false;  // only for a run without a series in this panel yet
};

Series make_series(const RunLog& run, std::size_t index, const SeriesSpec& spec, XAxisKind kind) {
  Series series{index, spec.label, spec.style, {}};
  const auto ends = epoch_end_steps(run);
  const std::vector<LogRecord>& records = spec.from_steps ? run.steps : run.epochs;
  const std::vector<double> xs = spec.from_steps ? step_xs(run, kind, ends) : std::vector<double>{};
  for (std::size_t i = 0; i < records.size(); ++i) {
    const auto value = records[i].values.find(spec.key);
    if (value == records[i].values.end()) continue;
    const std::optional<double> x = spec.from_steps ? std::optional<double>(xs[i]) : epoch_x(records[i], kind, ends);
    if (x) series.points.push_back({*x, value->second * spec.scale});
  }
  std::stable_sort(series.points.begin(), series.points.end(), [](const Point& a, const Point& b) { return a.x < b.x; });
  return series;
}

PanelData make_panel(const std::vector<RunLog>& runs, XAxisKind kind, std::string title, std::string y_label,
                     const std::vector<SeriesSpec>& specs) {
  PanelData panel{std::move(title), std::move(y_label), false, {}};
  for (std::size_t run = 0; run < runs.size(); ++run) {
    const std::size_t before = panel.series.size();
    for (const SeriesSpec& spec : specs) {
      if (spec.unless_run_has_one && panel.series.size() > before) continue;
      Series series = make_series(runs[run], run, spec, kind);
      if (!series.points.empty()) panel.series.push_back(std::move(series));
    }
  }
  return panel;
}

}  // namespace

RunLog read_run_log(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code error;
  EMBER_CHECK(!fs::is_directory(path, error), IOError, path, ": is a directory (expected a metrics log, .jsonl)");
  std::ifstream file(path);
  EMBER_CHECK(file.is_open(), IOError, path, ": cannot read the metrics log (", std::strerror(errno), ")");
  RunLog run;
  run.path = path;
  run.name = fs::path(path).stem().string();
  std::string line;
  for (std::int64_t number = 1; std::getline(file, line); ++number) {
    if (blank(line)) continue;
    const std::string where = make_message(path, ":", number);
    nlohmann::json entry;
    try {
      entry = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error& failure) {
      const std::string reason = failure.what();
      throw IOError(make_message(where, ": not valid JSON (", reason.substr(reason.find(']') + 2), ")"));
    }
    EMBER_CHECK(entry.is_object(), IOError, where, ": expected a JSON object, got ", entry.dump());
    const auto event = entry.find("event");
    EMBER_CHECK(event != entry.end() && event->is_string(), IOError, where, ": the object has no \"event\" name");
    if (*event == "step") {
      run.steps.push_back(parse_record(entry, "step", where));
    } else if (*event == "epoch") {
      run.epochs.push_back(parse_record(entry, "epoch", where));
    } else if (*event == "eval") {
      // A GPT's evaluation (the mean loss of a few random batches of each split) at its
      // step: kept with the epoch events, numbered 1, 2, ... and placed by its step; its
      // train loss is an estimate, not an epoch's mean, and is labelled so.
      nlohmann::json as_epoch = entry;
      as_epoch["epoch"] = static_cast<std::int64_t>(run.epochs.size()) + 1;
      const auto step = entry.find("step");
      EMBER_CHECK(step != entry.end() && step->is_number_integer(), IOError, where,
                  ": an eval event needs an integer \"step\"");
      if (as_epoch.contains("train_loss")) {
        as_epoch["estimated_train_loss"] = as_epoch["train_loss"];
        as_epoch.erase("train_loss");
      }
      run.epochs.push_back(parse_record(as_epoch, "eval", where));
      run.steps_only = true;
    }  // "summary" and events of later versions hold nothing to plot over time
  }
  EMBER_CHECK(!file.bad(), IOError, path, ": reading the metrics log failed (", std::strerror(errno), ")");
  EMBER_CHECK(!run.steps.empty() || !run.epochs.empty(), IOError, path,
              ": no step, epoch or eval events to plot (is it a log of `ember train --log`?)");
  return run;
}

FigureData figure_data(const std::vector<RunLog>& runs, bool log_loss) {
  FigureData figure;
  const bool every_run_has_steps = !runs.empty() && std::all_of(runs.begin(), runs.end(), [](const RunLog& run) {
    return !run.steps.empty() || run.steps_only;
  });
  figure.x_kind = every_run_has_steps ? XAxisKind::Step : XAxisKind::Epoch;
  for (const RunLog& run : runs) figure.run_names.push_back(run.name);

  using S = SeriesStyle;
  const XAxisKind kind = figure.x_kind;
  PanelData loss = make_panel(runs, kind, "Loss", "cross-entropy loss",
                              {{true, "loss", "per step", S::PerStep},
                               {false, "train_loss", "train (epoch mean)", S::Train},
                               {false, "estimated_train_loss", "train (estimate)", S::Train},
                               {false, "val_loss", "validation", S::Validation}});
  loss.log_y = log_loss;
  PanelData accuracy = make_panel(runs, kind, "Accuracy", "accuracy (%)",
                                  {{false, "train_acc", "train", S::Train, 100.0},
                                   {false, "val_acc", "validation", S::Validation, 100.0}});
  PanelData lr = make_panel(runs, kind, "Learning rate", "learning rate",
                            {{true, "lr", "per step", S::Train}, {false, "lr", "per epoch", S::Train, 1.0, true}});
  PanelData grad_norm = make_panel(runs, kind, "Gradient norm", "total 2-norm", {{true, "grad_norm", "per step", S::PerStep}});
  for (PanelData* panel : {&loss, &accuracy, &lr, &grad_norm}) {
    if (!panel->series.empty()) figure.panels.push_back(std::move(*panel));
  }
  return figure;
}

}  // namespace ember::cli
