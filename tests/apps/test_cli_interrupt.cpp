// tests/apps/test_cli_interrupt.cpp — Ctrl-C during `ember train`: where it stops, what it keeps, what it says.
//
// The contract (apps/cli/interrupt.h, train_command.cpp): the first SIGINT stops training
// after the current batch (or before the next epoch, or inside the final evaluation), exit
// code 130, and the last checkpoint written is the one of the last completed epoch. The
// message names only files that hold what it says: a --save file this run wrote, or the
// --resume file it started from — never a --save file that was not written.
// Each run gets its SIGINT at a moment told by its own output (run_ember_interrupted); the
// data sets are sized so that moment falls well inside the phase under test.
#include <catch2/catch.hpp>

#include <filesystem>
#include <regex>
#include <string>

#include <ember/nn/serialize.h>

#include "test_cli_helpers.h"

using namespace ember::testing;
using namespace ember::testing::cli;

namespace {

// The number after `prefix` in `text` (-1 when absent).
long long number_after(const std::string& text, const std::string& prefix) {
  auto at = text.find(prefix);
  return at == std::string::npos ? -1 : std::stoll(text.substr(at + prefix.size()));
}

}  // namespace

TEST_CASE("Ctrl-C stops ember train and keeps the checkpoint of the last completed epoch", "[cli][interrupt]") {
  ScratchDir scratch("interrupt");
  // A run far too long to finish: interrupt it once a few checkpoints were written.
  const std::string flags = "train --data toy --hidden 8 --batch-size 2 --lr 0.2 --momentum 0.9 --dropout 0.1 --seed 12";
  std::string checkpoint = scratch / "ck.st", log = scratch / "log.jsonl";
  InterruptedRun run = run_ember_interrupted(
      scratch, flags + " --epochs 100000000 --quiet --log " + log + " --save " + checkpoint,
      "test -f '" + checkpoint + "' && sleep 0.2");
  INFO(run.output);
  CHECK(run.exit_code == 130);
  ember::Metadata metadata;
  ember::nn::StateDict interrupted = ember::load(checkpoint, &metadata);
  long long saved = std::stoll(metadata.at("epoch"));
  REQUIRE(saved >= 1);
  // It stopped in the epoch after the saved one (or just before it began) and says so.
  std::regex stop("ember: interrupted (during epoch (\\d+) \\(after batch \\d+ of 3\\)|before epoch (\\d+) started); "
                  "the checkpoint of epoch (\\d+) in " + checkpoint + " is intact\n");
  std::smatch match;
  REQUIRE(std::regex_search(run.output, match, stop));
  long long stopped_in = std::stoll(match[2].matched ? match[2].str() : match[3].str());
  CHECK(stopped_in == saved + 1);
  CHECK(std::stoll(match[4]) == saved);

  // The log ends with that epoch (no summary: the run did not finish).
  std::vector<nlohmann::json> entries = log_entries(log);
  REQUIRE(!entries.empty());
  long long last_logged_epoch = 0;
  for (const auto& entry : entries) {
    CHECK(entry.at("event") == "epoch");
    last_logged_epoch = entry.at("epoch").get<long long>();
  }
  CHECK(last_logged_epoch == saved);

  // The checkpoint is exactly that epoch's state: a run of `saved` epochs ends identically.
  int code = -1;
  run_ember(flags + " --epochs " + std::to_string(saved) + " --quiet --save " + scratch / "straight.st", &code);
  REQUIRE(code == 0);
  ember::Metadata straight_metadata;
  ember::nn::StateDict straight = ember::load(scratch / "straight.st", &straight_metadata);
  REQUIRE(straight.size() == interrupted.size());
  for (const auto& [name, tensor] : straight) {
    INFO(name);
    const ember::Tensor* other = interrupted.find(name);
    REQUIRE(other != nullptr);
    CHECK(tensor.equal(*other));
  }
  CHECK(straight_metadata.at("generator") == metadata.at("generator"));
  CHECK(straight_metadata.at("step") == metadata.at("step"));
}

TEST_CASE("Ctrl-C in the first epoch of a run names no checkpoint it did not write", "[cli][interrupt]") {
  ScratchDir scratch("interrupt_first");
  // 5000 examples in batches of 1: an epoch takes a good fraction of a second or more.
  std::string data = scratch / "data";
  write_idx_dataset(data, 5000, 6);
  const std::string flags = "train --data idx:" + data + " --hidden 4 --batch-size 1 --lr 0.05 --seed 2";
  std::string checkpoint = scratch / "ck.st", other = scratch / "other.st";

  SECTION("a fresh run") {
    InterruptedRun run = run_ember_interrupted(scratch, flags + " --epochs 1000 --save " + checkpoint,
                                               "grep -q 'Training a' \"$out\"");
    INFO(run.output);
    CHECK(run.exit_code == 130);
    CHECK_THAT(run.output, Catch::Contains("no epoch was completed, so no checkpoint was written\n"));
    CHECK(!std::filesystem::exists(checkpoint));
  }

  SECTION("a resumed run") {
    int code = -1;
    run_ember(flags + " --epochs 1 --quiet --save " + checkpoint, &code);
    REQUIRE(code == 0);
    const std::string before = read_file(checkpoint);

    // Another --save: it was never written, and the message says where epoch 1 still is.
    InterruptedRun run = run_ember_interrupted(
        scratch, flags + " --epochs 1000 --resume " + checkpoint + " --save " + other,
        "grep -q 'resuming after epoch 1' \"$out\"");
    INFO(run.output);
    CHECK(run.exit_code == 130);
    CHECK_THAT(run.output, Catch::Matches("[\\s\\S]*ember: interrupted (during|before) epoch 2[\\s\\S]*"));
    CHECK_THAT(run.output, Catch::Contains("no epoch was completed in this run, so " + other + " was not written (" +
                                           checkpoint + " still holds epoch 1)\n"));
    CHECK_THAT(run.output, !Catch::Contains("is intact"));
    CHECK(!std::filesystem::exists(other));
    CHECK(read_file(checkpoint) == before);

    // The same file for --resume and --save: it still holds epoch 1, untouched.
    run = run_ember_interrupted(scratch, flags + " --epochs 1000 --resume " + checkpoint + " --save " + checkpoint,
                                "grep -q 'resuming after epoch 1' \"$out\"");
    CHECK(run.exit_code == 130);
    CHECK_THAT(run.output, Catch::Contains("the checkpoint of epoch 1 in " + checkpoint +
                                           " is intact (no epoch was completed in this run)\n"));
    CHECK(read_file(checkpoint) == before);
  }
}

TEST_CASE("Ctrl-C during the final evaluation stops with exit code 130", "[cli][interrupt]") {
  ScratchDir scratch("interrupt_eval");
  // One training step on a tenth of 20000 examples, then evaluations of all of them through
  // a wide model: the SIGINT sent when the epoch's line appears lands in the final evaluation.
  std::string data = scratch / "data";
  write_idx_dataset(data, 20000, 10);
  std::string checkpoint = scratch / "ck.st", log = scratch / "log.jsonl";
  InterruptedRun run = run_ember_interrupted(
      scratch,
      // --device cpu: the evaluation's length is sized for a CPU; an H200 finished it before
      // the signal arrived.
      "train --data idx:" + data + " --device cpu --hidden 512,512 --epochs 1 --batch-size 2000 --val-split 0.9 --save " +
          checkpoint + " --log " + log,
      "grep -q 'Epoch: 001/001 | train loss' \"$out\"");
  INFO(run.output);
  CHECK(run.exit_code == 130);
  CHECK_THAT(run.output, Catch::Contains("ember: interrupted during the final evaluation; the checkpoint of epoch 1 in " +
                                         checkpoint + " is intact\n"));
  CHECK_THAT(run.output, !Catch::Contains("Summary"));
  ember::Metadata metadata;
  ember::load(checkpoint, &metadata);
  CHECK(metadata.at("epoch") == "1");
  std::vector<nlohmann::json> entries = log_entries(log);
  REQUIRE(!entries.empty());
  CHECK(entries.back().at("event") == "epoch");  // no summary line
  CHECK(number_after(run.output, "(2000 training, ") == 18000);
}
