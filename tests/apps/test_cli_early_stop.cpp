// tests/apps/test_cli_early_stop.cpp — `ember train --early-stop PATIENCE --monitor M
// --min-delta D` and `--save-best PATH` (apps/cli/early_stopping_run.h).
//
// The rule itself is unit-tested in test_early_stopping.cpp; here the CLI: the run stops
// after the epoch the rule names for the monitored values it logged (recomputed here from
// the log, independently), says so in the summary and in an early_stop log event, keeps the
// best epoch's parameters in --save-best (equal to a run trained for exactly that many
// epochs), continues the count across --resume (also from a mid-epoch checkpoint), and
// refuses bad flags and paths with exit code 2.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include <ember/nn/serialize.h>

#include "launch_test_helpers.h"
#include "test_cli_helpers.h"

using namespace ember::testing;
using namespace ember::testing::cli;
using ember::testing::launch::run_shell;

namespace {

// 18 training examples (--val-split 0.25), batch 4: 5 steps per epoch.
std::string base_flags(int epochs = 40) {
  return "train --data idx:" + fixtures_dir() + "/idx --hidden 8 --batch-size 4 --lr 0.5 --val-split 0.25 --seed 1 "
         "--quiet --epochs " + std::to_string(epochs);
}

// The epoch lines' values of `key`, in order.
std::vector<double> logged(const std::string& log, const std::string& key) {
  std::vector<double> values;
  for (const auto& entry : log_entries(log)) {
    if (entry.at("event") == "epoch") values.push_back(entry.at(key).get<double>());
  }
  return values;
}

// The Keras rule, written out again: the epoch after which it stops (0: never) and the best epoch.
std::pair<int, int> expected_stop(const std::vector<double>& values, bool higher_is_better, int patience,
                                  double min_delta) {
  double best = higher_is_better ? -INFINITY : INFINITY;
  int best_epoch = 0, wait = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double v = values[i];
    if (higher_is_better ? v - min_delta > best : v + min_delta < best) {
      best = v;
      best_epoch = static_cast<int>(i + 1);
      wait = 0;
    } else if (++wait >= patience) {
      return {static_cast<int>(i + 1), best_epoch};
    }
  }
  return {0, best_epoch};
}

nlohmann::json early_stop_event(const std::string& log) {
  for (const auto& entry : log_entries(log)) {
    if (entry.at("event") == "early_stop") return entry;
  }
  return nullptr;
}

void require_same_model(const std::string& a_path, const std::string& b_path) {
  ember::nn::StateDict a = ember::load(a_path), b = ember::load(b_path);
  int compared = 0;
  for (const auto& [name, tensor] : a) {
    if (name.rfind("model.", 0) != 0) continue;
    INFO(name);
    const ember::Tensor* other = b.find(name);
    REQUIRE(other != nullptr);
    CHECK(tensor.equal(*other));
    ++compared;
  }
  CHECK(compared == 4);  // 16-8-3: two weights, two biases
}

}  // namespace

TEST_CASE("ember train --early-stop stops after the epoch the rule names, and says so", "[cli][early-stop]") {
  ScratchDir scratch("early_stop");
  struct Setting {
    std::string flags;
    std::string monitor;
    bool higher_is_better;
    int patience;
    double min_delta;
  };
  const Setting settings[] = {
      {"--monitor val_acc --early-stop 3", "val_acc", true, 3, 0.0},   // saturates at 100%
      {"--early-stop 3 --min-delta 0.01", "val_loss", false, 3, 0.01},  // val_loss: the default with --val-split
      {"--monitor train_loss --early-stop 2 --min-delta 0.002", "train_loss", false, 2, 0.002},
  };
  for (const Setting& s : settings) {
    INFO(s.flags);
    int code = -1;
    const std::string log = scratch / (s.monitor + ".jsonl");
    std::string output = run_ember(base_flags() + " " + s.flags + " --log " + log, &code);
    INFO(output);
    REQUIRE(code == 0);
    const std::vector<double> values = logged(log, s.monitor);
    auto [stop, best_epoch] = expected_stop(values, s.higher_is_better, s.patience, s.min_delta);
    REQUIRE(stop > 0);  // each setting is chosen to stop well before epoch 40
    CHECK(static_cast<int>(values.size()) == stop);  // no epoch after the stop
    nlohmann::json event = early_stop_event(log);
    REQUIRE(event.is_object());
    CHECK(event.at("epoch") == stop);
    CHECK(event.at("monitor") == s.monitor);
    CHECK(event.at("best_epoch") == best_epoch);
    CHECK(event.at("best").get<double>() == values[static_cast<std::size_t>(best_epoch - 1)]);
    CHECK(event.at("patience") == s.patience);
    CHECK(event.at("min_delta").get<double>() == s.min_delta);
    CHECK_THAT(output, Catch::Contains("  early stopping:  after epoch " + std::to_string(stop) + " of 40: " + s.monitor +
                                       " did not improve by more than "));
    CHECK_THAT(output, Catch::Contains(" for " + std::to_string(s.patience) + " epochs (best "));
    CHECK_THAT(output, Catch::Contains(" at epoch " + std::to_string(best_epoch) + ")\n"));
    // The summary follows the event.
    CHECK(log_entries(log).back().at("event") == "summary");
  }
  // Not triggered: said so.
  int code = -1;
  std::string output = run_ember(base_flags(3) + " --early-stop 5", &code);
  CHECK(code == 0);
  CHECK_THAT(output, Catch::Contains("  early stopping:  not triggered (val_loss: best "));
}

TEST_CASE("ember train --save-best keeps the best epoch's model", "[cli][early-stop][save-best]") {
  ScratchDir scratch("save_best");
  int code = -1;
  // val_acc reaches its best early and stays there: the first epoch at the top is the best.
  std::string output = run_ember(base_flags() + " --monitor val_acc --early-stop 3 --save-best " +
                                     scratch / "best.st" + " --save " + scratch / "last.st" + " --log " +
                                     scratch / "log.jsonl",
                                 &code);
  INFO(output);
  REQUIRE(code == 0);
  const int best_epoch = early_stop_event(scratch / "log.jsonl").at("best_epoch").get<int>();
  CHECK_THAT(output, Catch::Contains("  best checkpoint: " + scratch / "best.st" + " (epoch " +
                                     std::to_string(best_epoch) + ", val_acc 1)\n"));
  ember::Metadata metadata;
  ember::load(scratch / "best.st", &metadata);
  CHECK(metadata.at("epoch") == std::to_string(best_epoch));
  // The same run trained for exactly best_epoch epochs has the same parameters.
  run_ember(base_flags(best_epoch) + " --save " + scratch / "reference.st", &code);
  REQUIRE(code == 0);
  require_same_model(scratch / "best.st", scratch / "reference.st");
  // The best checkpoint is a checkpoint like any other: ember eval reads it.
  output = run_ember("eval --checkpoint " + scratch / "best.st", &code);
  CHECK(code == 0);

  // Without --early-stop, --save-best follows --monitor (val_loss here: it keeps falling,
  // so the last epoch is the best).
  output = run_ember(base_flags(6) + " --save-best " + scratch / "best_loss.st" + " --save " +
                         scratch / "six.st",
                     &code);
  REQUIRE(code == 0);
  CHECK_THAT(output, Catch::Contains("  best checkpoint: " + scratch / "best_loss.st" + " (epoch 6, val_loss "));
  CHECK_THAT(output, !Catch::Contains("early stopping:"));
  require_same_model(scratch / "best_loss.st", scratch / "six.st");
}

TEST_CASE("ember train --early-stop continues its count across --resume, also mid-epoch", "[cli][early-stop][resume]") {
  ScratchDir scratch("early_stop_resume");
  auto flags_for = [](int epochs) { return base_flags(epochs) + " --early-stop 3 --min-delta 0.01 --log-every 1"; };
  const std::string flags = flags_for(40);
  int code = -1;
  std::string straight = run_ember(flags + " --save " + scratch / "straight.st" + " --log " + scratch / "straight.jsonl",
                                   &code);
  REQUIRE(code == 0);
  const int stop = early_stop_event(scratch / "straight.jsonl").at("epoch").get<int>();
  REQUIRE(stop > 4);
  // Stopped at the end of an epoch with a wait under way, and inside the stop epoch's predecessor.
  const std::string stops[] = {"", "--save-every 2"};
  for (const std::string& first_part : stops) {
    INFO(first_part);
    const std::string half = scratch / "half.st", log = scratch / "resumed.jsonl";
    if (first_part.empty()) {
      run_ember(flags_for(stop - 1) + " --save " + half + " --log " + log, &code);
      REQUIRE(code == 0);
    } else {
      // Step 5 * (stop - 2) + 3: batch 3 of epoch stop - 1; the last save, at an even step, is mid-epoch.
      const int step = 5 * (stop - 2) + 3;
      run_shell("EMBER_TEST_INTERRUPT_AT_STEP=" + std::to_string(step) + " " + launch::bin("ember") + " " + flags + " " +
                    first_part + " --save " + half + " --log " + log + " 2>&1",
                &code);
      REQUIRE(code == 130);
    }
    ember::Metadata metadata;
    ember::load(half, &metadata);
    REQUIRE(metadata.count("early_stopping") == 1);
    std::string output = run_ember(flags + " --resume " + half + " --save " + scratch / "resumed.st" + " --log " + log,
                                   &code);
    INFO(output);
    REQUIRE(code == 0);
    CHECK(early_stop_event(log) == early_stop_event(scratch / "straight.jsonl"));
    CHECK(logged(log, "val_loss") == logged(scratch / "straight.jsonl", "val_loss"));
    ember::nn::StateDict a = ember::load(scratch / "straight.st"), b = ember::load(scratch / "resumed.st");
    for (const auto& [name, tensor] : a) {
      INFO(name);
      REQUIRE(b.find(name) != nullptr);
      CHECK(tensor.equal(*b.find(name)));
    }
  }
  // Resuming the stopped run's last checkpoint stops again at once; a larger patience trains on.
  std::string output = run_ember(flags + " --resume " + scratch / "straight.st", &code);
  CHECK(code == 0);
  CHECK_THAT(output, Catch::Contains("  early stopping:  after epoch " + std::to_string(stop) + " of 40"));
  output = run_ember(base_flags(stop + 1) + " --early-stop 1000 --min-delta 0.01 --resume " + scratch / "straight.st" + " --log " + scratch / "more.jsonl",
                     &code);
  CHECK(code == 0);
  CHECK(logged(scratch / "more.jsonl", "epoch") == std::vector<double>{static_cast<double>(stop + 1)});
  // Another --monitor: the checkpoint's best means nothing for it.
  output = run_ember(base_flags() + " --early-stop 3 --min-delta 0.01 --monitor val_acc --resume " +
                         scratch / "straight.st",
                     &code);
  CHECK(code == 0);
  CHECK_THAT(output, Catch::Contains("ember: warning: --resume " + scratch / "straight.st" +
                                     " tracked val_loss for early stopping and --save-best, this run --monitor val_acc: "
                                     "its best value starts afresh"));
}

TEST_CASE("ember train --early-stop, --min-delta and --save-best: bad flags and paths exit 2", "[cli][early-stop]") {
  ScratchDir scratch("early_stop_usage");
  const std::string train = "train --data toy --epochs 1 --quiet ";
  struct Refused {
    std::string arguments;
    std::string message;
  };
  write_bytes(scratch / "data.csv", "label,x\n0,1\n1,2\n");
  std::filesystem::create_directories(scratch / "dir");
  const Refused refused[] = {
      {train + "--early-stop 0", "--early-stop: must be at least 1, got 0"},
      {train + "--early-stop 3 --min-delta -1", "--min-delta: must be non-negative, got -1"},
      {train + "--min-delta 0.1", "--min-delta: only means something with --early-stop or --save-best"},
      {train + "--early-stop 2 --monitor val_acc", "--monitor: val_acc needs a validation split (--val-split > 0)"},
      {train + "--save-best " + scratch / "a.st" + " --save " + scratch / "a.st",
       "ember: error: --save-best " + scratch / "a.st" + " is the same file as the --save checkpoint " + scratch / "a.st" +
           ": the best model and the latest checkpoint would overwrite each other; choose another path"},
      {train + "--save-best " + scratch / "a.st" + " --log " + scratch / "a.st",
       "ember: error: --log " + scratch / "a.st" + " is the same file as the --save-best checkpoint " +
           scratch / "a.st" + ": the metrics log and the best checkpoint would overwrite each other"},
      {"train --data csv:" + scratch / "data.csv" + " --epochs 1 --quiet --save-best " + scratch / "data.csv",
       "ember: error: --save-best " + scratch / "data.csv" + " is the same file as the --data csv:" +
           scratch / "data.csv" + " file " + scratch / "data.csv" + ": the best model would replace it"},
      {train + "--save-best " + scratch / "dir", "ember: error: --save-best " + scratch / "dir" +
                                                     ": is a directory (expected a file name)"},
      {train + "--save-best /dev/null", "ember: error: --save-best /dev/null: is a character device, not a regular file"},
  };
  for (const Refused& r : refused) {
    INFO(r.arguments);
    int code = -1;
    std::string output = run_ember(r.arguments, &code);
    CHECK(code == 2);
    CHECK_THAT(output, Catch::Contains(r.message));
    CHECK_FALSE(std::filesystem::exists(scratch / "a.st"));
  }
  // --save-best onto the --resume checkpoint: refused too (the run's starting point).
  int code = -1;
  run_ember(train + "--save " + scratch / "ck.st", &code);
  REQUIRE(code == 0);
  std::string output = run_ember("train --data toy --epochs 2 --quiet --resume " + scratch / "ck.st" + " --save-best " +
                                     scratch / "ck.st",
                                 &code);
  CHECK(code == 2);
  CHECK_THAT(output, Catch::Contains("--save-best " + scratch / "ck.st" + " is the same file as the --resume checkpoint"));
  // A directory that does not exist is a failed run (exit 1), as for --save.
  output = run_ember(train + "--save-best " + scratch / "missing/best.st", &code);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains("ember: error: --save-best " + scratch / "missing/best.st" + ": directory " +
                                     scratch / "missing" + " does not exist"));
}

TEST_CASE("ember train on 2 ranks: --early-stop on a validation metric stops every rank after the same epoch",
          "[cli][early-stop][distributed]") {
  // Rank 0 alone evaluates the validation split; the other rank learns the decision.
  // Were it to train on, the job would hang in its next collective (and time out).
  ScratchDir scratch("early_stop_distributed");
  int code = -1;
  std::string output = run_shell(launch::bin("ember-run") + " --nproc-per-node 2 -- " + launch::bin("ember") +
                                     " train --device cpu --data idx:" + fixtures_dir() +
                                     "/idx --hidden 8 --batch-size 2 --lr 0.5 --val-split 0.25 --seed 1 --epochs 40 "
                                     "--quiet --timeout 60 --monitor val_acc --early-stop 2 --save-best " +
                                     scratch / "best.st" + " --log " + scratch / "log.jsonl" + " 2>&1",
                                 &code);
  INFO(output);
  REQUIRE(code == 0);
  const std::vector<double> values = logged(scratch / "log.jsonl", "val_acc");
  auto [stop, best_epoch] = expected_stop(values, true, 2, 0.0);
  REQUIRE(stop > 0);
  CHECK(static_cast<int>(values.size()) == stop);
  CHECK(early_stop_event(scratch / "log.jsonl").at("best_epoch") == best_epoch);
  CHECK(std::filesystem::exists(scratch / "best.st"));
}
