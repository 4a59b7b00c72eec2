// tests/apps/test_early_stopping.cpp — the early-stopping rule of `ember train --early-stop`
// (apps/cli/early_stopping.h), apart from the CLI, on crafted sequences of monitored values.
//
// The rule is Keras's EarlyStopping: an improvement beats the best by more than min_delta;
// each other epoch adds one to the wait; the run stops after the epoch whose wait reaches
// the patience. The values are binary fractions, so no comparison sits on a rounding edge.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include <ember/core/error.h>

#include "early_stopping.h"

using ember::cli::EarlyStopping;
using ember::cli::EarlyStoppingState;
using ember::cli::MonitorMode;

namespace {

// Feeds the values epoch by epoch (1-based); returns the epoch after which training stops
// (0: it never does) and the best epoch at that point.
struct Outcome {
  std::int64_t stopped_after = 0;
  std::int64_t best_epoch = 0;
  double best = 0;
};
Outcome run_rule(EarlyStopping rule, const std::vector<double>& values) {
  Outcome outcome;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const auto epoch = static_cast<std::int64_t>(i + 1);
    rule.update(epoch, values[i]);
    if (rule.should_stop()) {
      outcome.stopped_after = epoch;
      break;
    }
  }
  outcome.best_epoch = rule.state().best_epoch;
  outcome.best = rule.state().best;
  return outcome;
}

}  // namespace

TEST_CASE("early stopping (min): stops after PATIENCE epochs without a strict improvement", "[cli][early-stop]") {
  // best 1 (epoch 1), 0.5 (2); 0.5 again is no improvement (wait 1), 0.75 (wait 2): stop after 4.
  Outcome outcome = run_rule(EarlyStopping("val_loss", MonitorMode::Min, 2, 0.0), {1.0, 0.5, 0.5, 0.75, 0.25, 0.125});
  CHECK(outcome.stopped_after == 4);
  CHECK(outcome.best_epoch == 2);
  CHECK(outcome.best == 0.5);
  // With patience 3 the improvement at epoch 5 resets the wait; it never stops.
  outcome = run_rule(EarlyStopping("val_loss", MonitorMode::Min, 3, 0.0), {1.0, 0.5, 0.5, 0.75, 0.25, 0.125});
  CHECK(outcome.stopped_after == 0);
  CHECK(outcome.best_epoch == 6);
  // Patience 1: the first epoch without an improvement stops the run.
  outcome = run_rule(EarlyStopping("train_loss", MonitorMode::Min, 1, 0.0), {1.0, 0.5, 0.5, 0.25});
  CHECK(outcome.stopped_after == 3);
}

TEST_CASE("early stopping: an improvement must exceed min_delta", "[cli][early-stop]") {
  // min_delta 0.25: 0.875 and 0.75 are within 0.25 of 1 (no improvement: wait 1, 2); 0.5 is
  // not more than 0.25 below 0.75 but is below 1 - 0.25 (improves; the best was still 1).
  EarlyStopping rule("val_loss", MonitorMode::Min, 3, 0.25);
  CHECK(rule.update(1, 1.0));
  CHECK_FALSE(rule.update(2, 0.875));
  CHECK_FALSE(rule.update(3, 0.75));  // exactly min_delta better: not more than it
  CHECK(rule.state().wait == 2);
  CHECK(rule.update(4, 0.5));
  CHECK(rule.state().wait == 0);
  CHECK(rule.state().best_epoch == 4);
  Outcome outcome = run_rule(EarlyStopping("val_loss", MonitorMode::Min, 3, 0.25), {1.0, 0.875, 0.75, 0.5, 0.375, 0.25, 0.3125});
  CHECK(outcome.stopped_after == 7);  // 0.375, 0.25 (exactly 0.25 below 0.5), 0.3125: waits 1, 2, 3
  CHECK(outcome.best_epoch == 4);
}

TEST_CASE("early stopping (max): an accuracy improves upwards", "[cli][early-stop]") {
  Outcome outcome = run_rule(EarlyStopping("val_acc", MonitorMode::Max, 2, 0.0), {0.5, 0.75, 0.625, 0.75, 0.875});
  CHECK(outcome.stopped_after == 4);
  CHECK(outcome.best_epoch == 2);
  CHECK(outcome.best == 0.75);
  outcome = run_rule(EarlyStopping("val_acc", MonitorMode::Max, 2, 0.125), {0.5, 0.625, 0.5625, 0.75});
  CHECK(outcome.stopped_after == 3);  // 0.625 is exactly 0.125 above 0.5: no improvement
  CHECK(outcome.best_epoch == 1);
}

TEST_CASE("early stopping: nan never improves, patience 0 never stops", "[cli][early-stop]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Outcome outcome = run_rule(EarlyStopping("val_loss", MonitorMode::Min, 2, 0.0), {0.5, nan, nan, 0.25});
  CHECK(outcome.stopped_after == 3);
  CHECK(outcome.best == 0.5);
  // A first value of nan leaves the best at +inf.
  EarlyStopping first("val_loss", MonitorMode::Min, 5, 0.0);
  CHECK_FALSE(first.update(1, nan));
  CHECK(std::isinf(first.state().best));
  CHECK(first.state().best_epoch == 0);
  // Patience 0 (--save-best without --early-stop): the best is tracked, the run never stops.
  outcome = run_rule(EarlyStopping("val_loss", MonitorMode::Min, 0, 0.0), {1.0, 2.0, 3.0, 4.0, 0.5, 6.0});
  CHECK(outcome.stopped_after == 0);
  CHECK(outcome.best_epoch == 5);
  CHECK_THROWS_AS(EarlyStopping("val_loss", MonitorMode::Min, -1, 0.0), ember::ValueError);
  CHECK_THROWS_AS(EarlyStopping("val_loss", MonitorMode::Min, 1, -0.5), ember::ValueError);
}

TEST_CASE("early stopping: the state survives a checkpoint and continues the count", "[cli][early-stop]") {
  EarlyStopping before("val_loss", MonitorMode::Min, 3, 0.0);
  before.update(1, 0.5);
  before.update(2, 0.75);  // wait 1
  const std::string text = ember::cli::early_stopping_to_text(before.state());
  EarlyStoppingState saved = ember::cli::early_stopping_from_text(text, "ck.st");
  CHECK(saved.monitor == "val_loss");
  CHECK(saved.best == 0.5);
  CHECK(saved.best_epoch == 1);
  CHECK(saved.wait == 1);
  EarlyStopping after("val_loss", MonitorMode::Min, 3, 0.0);
  REQUIRE(after.restore(saved));
  after.update(3, 0.75);
  CHECK_FALSE(after.should_stop());
  after.update(4, 0.625);
  CHECK(after.should_stop());  // epochs 2, 3, 4 without an improvement: as one uninterrupted rule
  // Another monitor's best means nothing: ignored.
  EarlyStopping other("val_acc", MonitorMode::Max, 3, 0.0);
  CHECK_FALSE(other.restore(saved));
  CHECK(other.state().best_epoch == 0);
  // Infinities and nan survive the text; damage is an IOError naming the file.
  EarlyStoppingState infinite{"val_loss", std::numeric_limits<double>::infinity(), 0, 0};
  CHECK(std::isinf(ember::cli::early_stopping_from_text(ember::cli::early_stopping_to_text(infinite), "x").best));
  CHECK_THROWS_AS(ember::cli::early_stopping_from_text("{\"monitor\": 1}", "ck.st"), ember::IOError);
  CHECK_THROWS_WITH(ember::cli::early_stopping_from_text(
                        "{\"monitor\":\"val_loss\",\"best\":\"abc\",\"best_epoch\":1,\"wait\":0}", "ck.st"),
                    "ck.st: the checkpoint's early_stopping best value \"abc\" is not a number");
}
