// tests/apps/test_plot_data.cpp — `ember plot` without cairo: reading metrics logs, the
// series picked from them, nice axes, and the data-to-pixel mapping of the layout.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>

#include <ember/core/error.h>

#include "plot_axes.h"
#include "plot_data.h"
#include "plot_layout.h"
#include "test_cli_helpers.h"

using namespace ember::cli;
using ember::testing::cli::ScratchDir;
using Catch::Matchers::Contains;

namespace {

std::string write_log(const ScratchDir& scratch, const std::string& name, const std::string& text) {
  const std::string path = scratch / name;
  std::ofstream(path) << text;
  return path;
}

// Two epochs of four steps, every step logged, with lr and validation values.
const char* kFullLog =
    R"({"event":"step","epoch":1,"step":1,"loss":2.5,"lr":0.1,"grad_norm":3.0}
{"event":"step","epoch":1,"step":2,"loss":1.5,"lr":0.1,"grad_norm":2.0}
{"event":"step","epoch":1,"step":3,"loss":1.0,"lr":0.05,"grad_norm":1.0}
{"event":"step","epoch":1,"step":4,"loss":0.8,"lr":0.05,"grad_norm":1.0}
{"event":"epoch","epoch":1,"step":4,"train_loss":1.45,"train_acc":0.5,"val_acc":0.6,"val_loss":1.2,"samples_per_s":100,"elapsed_s":1}
{"event":"step","epoch":2,"step":5,"loss":0.7,"lr":0.02,"grad_norm":0.5}
{"event":"step","epoch":2,"step":6,"loss":0.6,"lr":0.02,"grad_norm":0.5}
{"event":"step","epoch":2,"step":7,"loss":0.5,"lr":0.01,"grad_norm":0.4}
{"event":"step","epoch":2,"step":8,"loss":0.2,"lr":0.01,"grad_norm":0.3}
{"event":"epoch","epoch":2,"step":8,"train_loss":0.5,"train_acc":0.8,"val_acc":0.75,"val_loss":0.9,"samples_per_s":120,"elapsed_s":2}
{"event":"summary","train_acc":0.8,"val_acc":0.75,"test_acc":null,"elapsed_s":2.5,"device":"cpu"}
)";

// What `ember train --log` writes without --log-every and --val-split (epoch events only,
// no step in them: a log of an earlier version).
const char* kEpochOnlyLog =
    R"({"event":"epoch","epoch":1,"train_loss":0.9,"train_acc":0.7,"val_acc":null,"samples_per_s":1,"elapsed_s":1}
{"event":"epoch","epoch":2,"train_loss":0.6,"train_acc":0.8,"val_acc":null,"samples_per_s":1,"elapsed_s":2}
{"event":"epoch","epoch":3,"train_loss":0.4,"train_acc":0.85,"val_acc":null,"samples_per_s":1,"elapsed_s":3}
)";

const PanelData* panel_titled(const FigureData& figure, const std::string& title) {
  for (const PanelData& panel : figure.panels) {
    if (panel.title == title) return &panel;
  }
  return nullptr;
}

const Series* series_labelled(const PanelData& panel, std::size_t run, const std::string& label) {
  for (const Series& series : panel.series) {
    if (series.run == run && series.label == label) return &series;
  }
  return nullptr;
}

std::string error_of(const std::string& path) {
  try {
    read_run_log(path);
  } catch (const ember::IOError& error) {
    return error.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("plot: a metrics log is read back event by event", "[apps][plot]") {
  ScratchDir scratch("plot_read");
  const RunLog run = read_run_log(write_log(scratch, "run-a.jsonl", kFullLog));
  CHECK(run.name == "run-a");
  REQUIRE(run.steps.size() == 8);
  REQUIRE(run.epochs.size() == 2);  // the summary holds nothing to plot over time
  CHECK(run.steps[2].epoch == 1);
  CHECK(*run.steps[2].step == 3);
  CHECK(run.steps[2].values.at("loss") == 1.0);
  CHECK(run.steps[2].values.at("lr") == 0.05);
  CHECK(*run.epochs[1].step == 8);
  CHECK(run.epochs[1].values.at("val_loss") == 0.9);

  const RunLog old = read_run_log(write_log(scratch, "old.jsonl", kEpochOnlyLog));
  CHECK(old.steps.empty());
  CHECK_FALSE(old.epochs[0].step.has_value());
  CHECK(old.epochs[0].values.count("val_acc") == 0);  // null: absent
}

TEST_CASE("plot: a missing or malformed log is an error naming the file and line", "[apps][plot]") {
  ScratchDir scratch("plot_errors");
  CHECK_THAT(error_of(scratch / "missing.jsonl"), Contains(scratch / "missing.jsonl") && Contains("cannot read"));
  CHECK_THAT(error_of(scratch.str()), Contains("is a directory"));
  const std::string good = R"({"event":"step","epoch":1,"step":1,"loss":1.0})";
  CHECK_THAT(error_of(write_log(scratch, "a.jsonl", good + "\n" + good + "\n{\"event\": \"step\", oops}\n")),
             Contains(scratch / "a.jsonl:3: not valid JSON"));
  CHECK_THAT(error_of(write_log(scratch, "b.jsonl", good + "\n[1, 2]\n")),
             Contains(scratch / "b.jsonl:2: expected a JSON object"));
  CHECK_THAT(error_of(write_log(scratch, "c.jsonl", R"({"event":"step","epoch":1,"loss":1.0})")),
             Contains(scratch / "c.jsonl:1: a step event needs an integer \"step\""));
  CHECK_THAT(error_of(write_log(scratch, "d.jsonl", "\n" + good + "\n" + R"({"event":"epoch","epoch":1,"train_loss":"x"})")),
             Contains(scratch / "d.jsonl:3: \"train_loss\" is not a number"));
  CHECK_THAT(error_of(write_log(scratch, "e.jsonl", R"({"no_event":1})")), Contains("e.jsonl:1: the object has no \"event\""));
  CHECK_THAT(error_of(write_log(scratch, "f.jsonl", "")), Contains("no step, epoch or eval events to plot"));
}

TEST_CASE("plot: series come from the log's values, against the step when every run has steps", "[apps][plot]") {
  ScratchDir scratch("plot_series");
  const RunLog run = read_run_log(write_log(scratch, "full.jsonl", kFullLog));
  const FigureData figure = figure_data({run}, false);
  CHECK(figure.x_kind == XAxisKind::Step);
  REQUIRE(figure.panels.size() == 4);  // loss, accuracy, learning rate, gradient norm

  const PanelData& loss = *panel_titled(figure, "Loss");
  const Series& per_step = *series_labelled(loss, 0, "per step");
  REQUIRE(per_step.points.size() == 8);
  CHECK(per_step.points.front().x == 1);
  CHECK(per_step.points.front().y == 2.5);
  CHECK(per_step.points.back().x == 8);
  CHECK(per_step.points.back().y == 0.2);
  CHECK(per_step.style == SeriesStyle::PerStep);
  const Series& validation = *series_labelled(loss, 0, "validation");
  REQUIRE(validation.points.size() == 2);
  CHECK(validation.points[0].x == 4);  // an epoch's value at its last step
  CHECK(validation.points[1].x == 8);
  CHECK(validation.points[1].y == 0.9);
  CHECK(validation.style == SeriesStyle::Validation);

  const Series& accuracy = *series_labelled(*panel_titled(figure, "Accuracy"), 0, "train");
  CHECK(accuracy.points[1].y == Approx(80.0));  // percent
  const Series& lr = *series_labelled(*panel_titled(figure, "Learning rate"), 0, "per step");
  REQUIRE(lr.points.size() == 8);
  CHECK(lr.points[2].y == 0.05);
}

TEST_CASE("plot: absent series are skipped; mixed runs share an epoch axis", "[apps][plot]") {
  ScratchDir scratch("plot_epochs");
  const RunLog full = read_run_log(write_log(scratch, "full.jsonl", kFullLog));
  const RunLog old = read_run_log(write_log(scratch, "old.jsonl", kEpochOnlyLog));
  const FigureData alone = figure_data({old}, false);
  CHECK(alone.x_kind == XAxisKind::Epoch);
  REQUIRE(alone.panels.size() == 2);  // no lr, no grad_norm: no such panels
  const Series& train = *series_labelled(*panel_titled(alone, "Loss"), 0, "train (epoch mean)");
  REQUIRE(train.points.size() == 3);
  CHECK(train.points[2].x == 3);
  CHECK(series_labelled(*panel_titled(alone, "Accuracy"), 0, "validation") == nullptr);  // val_acc null

  const FigureData both = figure_data({full, old}, false);
  CHECK(both.x_kind == XAxisKind::Epoch);
  CHECK(both.run_names == std::vector<std::string>{"full", "old"});
  // Step s of epoch e sits at e - 1 + (s - first step) / (steps in e): step 2 of 4 at 0.5.
  const Series& steps = *series_labelled(*panel_titled(both, "Loss"), 0, "per step");
  REQUIRE(steps.points.size() == 8);
  CHECK(steps.points[1].x == Approx(0.5));
  CHECK(steps.points[3].x == Approx(1.0));
  CHECK(steps.points[4].x == Approx(1.25));
}

TEST_CASE("plot: axes have nice ticks around the data", "[apps][plot]") {
  Axis accuracy = nice_axis(0.0, 0.93);
  CHECK(accuracy.step == Approx(0.2));
  CHECK(accuracy.low == 0.0);
  CHECK(accuracy.high == Approx(1.0));
  REQUIRE(accuracy.ticks.size() == 6);
  CHECK(accuracy.tick_label(accuracy.ticks[3]) == "0.6");

  Axis steps = nice_axis(0, 5064, false, /*integer=*/true);
  CHECK(steps.step == 1000);
  CHECK(steps.high == 6000);
  CHECK(steps.tick_label(3000) == "3000");
  CHECK(nice_axis(1, 3, false, true).step == 1);  // epochs: whole numbers only

  Axis loss = nice_axis(0.06, 2.3, /*log=*/true);
  CHECK(loss.low == Approx(0.01));
  CHECK(loss.high == Approx(10));
  CHECK(std::find(loss.ticks.begin(), loss.ticks.end(), 1.0) != loss.ticks.end());
  loss.pixel_low = 300;
  loss.pixel_high = 0;
  CHECK(loss.to_pixel(0.1) == Approx(200));  // one decade of three
  CHECK(loss.to_pixel(1.0) == Approx(100));

  Axis flat = nice_axis(0.5, 0.5);  // one value: a range around it
  CHECK(flat.low < 0.5);
  CHECK(flat.high > 0.5);
}

TEST_CASE("plot: the layout maps every point into its frame, extremes to the axis ends", "[apps][plot]") {
  ScratchDir scratch("plot_layout");
  const RunLog run = read_run_log(write_log(scratch, "full.jsonl", kFullLog));
  const FigureLayout layout = layout_figure(figure_data({run}, false), 1000);
  CHECK(layout.width == 1000);
  REQUIRE(layout.panels.size() == 4);
  const PanelLayout& loss = layout.panels[0];
  CHECK(loss.title == "Loss");
  CHECK(loss.x_label == "step");
  const Rect& frame = loss.frame;
  // The x axis runs from step 0 to the last step: step 8 is the frame's right edge.
  CHECK(loss.x.low == 0);
  CHECK(loss.x.high == 8);
  // The loss axis: 0 .. 2.5 (nice ticks 0.5 apart), so 2.5 is the top edge.
  CHECK(loss.y.low == 0);
  CHECK(loss.y.high == Approx(2.5));
  const SeriesLayout& per_step = loss.series[0];
  REQUIRE(per_step.pixels.size() == 8);
  CHECK(per_step.pixels.front().x == Approx(frame.x + frame.width / 8));  // step 1 of 8
  CHECK(per_step.pixels.front().y == Approx(frame.y));                    // the largest loss, 2.5
  CHECK(per_step.pixels.back().x == Approx(frame.right()));               // step 8
  CHECK(per_step.pixels.back().y == Approx(frame.bottom() - frame.height * 0.2 / 2.5));
  CHECK_FALSE(per_step.markers);
  for (const PanelLayout& panel : layout.panels) {
    CHECK(panel.frame.right() <= layout.width);
    CHECK(panel.frame.bottom() <= layout.height);
    for (const SeriesLayout& series : panel.series) {
      for (const Point& point : series.pixels) {
        CHECK(point.x >= panel.frame.x - 1e-9);
        CHECK(point.x <= panel.frame.right() + 1e-9);
        CHECK(point.y >= panel.frame.y - 1e-9);
        CHECK(point.y <= panel.frame.bottom() + 1e-9);
      }
    }
  }
  // Epoch series have markers; panels are two to a row.
  CHECK(layout.panels[1].series[0].markers);
  CHECK(layout.panels[1].frame.y == layout.panels[0].frame.y);
  CHECK(layout.panels[2].frame.y > layout.panels[0].frame.bottom());
  // The legend: the run, then the key of the three line styles.
  REQUIRE(layout.legend.size() == 4);
  CHECK(layout.legend[0].text == "full");
  CHECK(layout.legend[0].is_run);
}

// What `ember train --model gpt --log-every 2 --eval-every 4` writes: steps without epochs,
// evaluations at a step, a summary.
const char* kGptLog =
    R"({"event":"step","step":2,"loss":3.9,"lr":0.001,"tokens_per_s":5000}
{"event":"step","step":4,"loss":3.1,"lr":0.001,"tokens_per_s":5100}
{"event":"eval","step":4,"train_loss":3.0,"val_loss":3.2,"tokens_per_s":5100,"elapsed_s":1}
{"event":"step","step":6,"loss":2.6,"lr":0.001,"tokens_per_s":5200}
{"event":"step","step":8,"loss":2.4,"lr":0.001,"tokens_per_s":5200}
{"event":"eval","step":8,"train_loss":2.3,"val_loss":2.5,"tokens_per_s":5200,"elapsed_s":2}
{"event":"summary","train_loss":2.3,"val_loss":2.5,"tokens_per_s":5200,"elapsed_s":2,"steps":8,"device":"cpu"}
)";

TEST_CASE("plot: a GPT's log is drawn against the step, evaluations at their steps", "[apps][plot][gpt]") {
  ScratchDir scratch("plot_gpt");
  const RunLog run = read_run_log(write_log(scratch, "gpt.jsonl", kGptLog));
  CHECK(run.steps_only);
  REQUIRE(run.steps.size() == 4);
  REQUIRE(run.epochs.size() == 2);
  const FigureData figure = figure_data({run}, false);
  CHECK(figure.x_kind == XAxisKind::Step);
  const PanelData& loss = *panel_titled(figure, "Loss");
  const Series& per_step = *series_labelled(loss, 0, "per step");
  REQUIRE(per_step.points.size() == 4);
  CHECK(per_step.points[3].x == 8);
  CHECK(per_step.points[3].y == 2.4);
  const Series& validation = *series_labelled(loss, 0, "validation");
  REQUIRE(validation.points.size() == 2);
  CHECK(validation.points[0].x == 4);
  CHECK(validation.points[1].x == 8);
  CHECK(validation.points[1].y == 2.5);
  const Series& estimate = *series_labelled(loss, 0, "train (estimate)");
  CHECK(estimate.points[0].y == 3.0);
  CHECK(series_labelled(loss, 0, "train (epoch mean)") == nullptr);
  CHECK(panel_titled(figure, "Accuracy") == nullptr);

  // Without --log-every only the evaluations are there: still placed by their step.
  const RunLog evals_only = read_run_log(write_log(scratch, "evals.jsonl",
                                                   R"({"event":"eval","step":200,"train_loss":2.0,"val_loss":2.1}
{"event":"eval","step":400,"train_loss":1.8,"val_loss":1.9}
)"));
  const FigureData sparse = figure_data({evals_only}, false);
  CHECK(sparse.x_kind == XAxisKind::Step);
  const Series& val = *series_labelled(*panel_titled(sparse, "Loss"), 0, "validation");
  REQUIRE(val.points.size() == 2);
  CHECK(val.points[1].x == 400);
  // An eval event needs its step.
  CHECK_THROWS_WITH(read_run_log(write_log(scratch, "bad.jsonl", R"({"event":"eval","val_loss":2.1})")),
                    Contains("bad.jsonl:1: an eval event needs an integer \"step\""));
}
