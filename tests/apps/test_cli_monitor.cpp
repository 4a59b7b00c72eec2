// tests/apps/test_cli_monitor.cpp — `ember train --monitor` and the per-epoch val_loss.
//
// val_loss is the mean cross-entropy of the model (in eval mode) over the validation split,
// logged next to val_acc and printed on the epoch line; --monitor names the metric early
// stopping and the plateau schedule watch (apps/cli/monitor.h). The val_loss values
// themselves are compared with PyTorch's in test_cli_schedules.cpp.
#include <catch2/catch.hpp>

#include <string>

#include "test_cli_helpers.h"

using namespace ember::testing;
using namespace ember::testing::cli;

TEST_CASE("ember train logs and prints val_loss next to val_acc", "[cli][monitor]") {
  ScratchDir scratch("monitor_log");
  std::string log = scratch / "log.jsonl";
  int code = -1;
  std::string output = run_ember("train --data idx:" + fixtures_dir() +
                                     "/idx --hidden 8 --epochs 2 --batch-size 4 --lr 0.5 --seed 3 --val-split 0.25 "
                                     "--log " + log,
                                 &code);
  INFO(output);
  REQUIRE(code == 0);
  CHECK_THAT(output, Catch::Contains(" | val loss "));
  int epochs = 0;
  for (const nlohmann::json& entry : log_entries(log)) {
    if (entry.at("event") != "epoch") continue;
    ++epochs;
    REQUIRE(entry.at("val_loss").is_number());
    // A cross-entropy over 3 classes of a barely trained model: positive and near log(3).
    CHECK(entry.at("val_loss").get<double>() > 0.0);
    CHECK(entry.at("val_loss").get<double>() < 5.0);
  }
  CHECK(epochs == 2);
}

TEST_CASE("ember train without --val-split logs val_loss as null", "[cli][monitor]") {
  ScratchDir scratch("monitor_null");
  std::string log = scratch / "log.jsonl";
  int code = -1;
  std::string output = run_ember("train --data toy --epochs 1 --quiet --log " + log, &code);
  REQUIRE(code == 0);
  CHECK_THAT(output, !Catch::Contains("val loss"));
  for (const nlohmann::json& entry : log_entries(log)) {
    if (entry.at("event") == "epoch") CHECK(entry.at("val_loss").is_null());
  }
}

TEST_CASE("ember train --monitor: a validation metric needs --val-split; unknown names are refused",
          "[cli][monitor]") {
  int code = -1;
  std::string output = run_ember("train --data toy --epochs 1 --monitor val_loss", &code);
  CHECK(code == 2);
  CHECK_THAT(output, Catch::Contains("--monitor: val_loss needs a validation split (--val-split > 0)"));
  output = run_ember("train --data toy --epochs 1 --monitor val_acc", &code);
  CHECK(code == 2);
  CHECK_THAT(output, Catch::Contains("val_acc needs a validation split"));
  output = run_ember("train --data toy --epochs 1 --monitor accuracy", &code);
  CHECK(code == 2);
  CHECK_THAT(output, Catch::Contains("expected val_loss, val_acc or train_loss, got 'accuracy'"));
  output = run_ember("train --data toy --epochs 1 --quiet --monitor train_loss", &code);
  CHECK(code == 0);
  output = run_ember("train --data idx:" + fixtures_dir() + "/idx --epochs 1 --quiet --val-split 0.25 --monitor val_acc",
                     &code);
  CHECK(code == 0);
}
