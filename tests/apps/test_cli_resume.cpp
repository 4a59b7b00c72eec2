// tests/apps/test_cli_resume.cpp — checkpoints, exact --resume, the metrics log, Ctrl-C.
//
// The promise: training 4 epochs, stopping, and resuming for 4 more gives bit-identical
// parameters (and optimizer state) to 8 epochs in one go — for plain SGD, momentum with
// dropout (whose masks come from the generator the checkpoint restores) and Adam.
#include <catch2/catch.hpp>

#include <csignal>
#include <string>

#include <ember/nn/serialize.h>

#include "test_cli_helpers.h"

using namespace ember::testing;
using namespace ember::testing::cli;

namespace {

void require_identical(const ember::nn::StateDict& a, const ember::nn::StateDict& b) {
  REQUIRE(a.size() == b.size());
  for (const auto& [name, tensor] : a) {
    INFO(name);
    const ember::Tensor* other = b.find(name);
    REQUIRE(other != nullptr);
    CHECK(tensor.equal(*other));  // bit for bit, not approximately
  }
}

}  // namespace

TEST_CASE("ember train --resume continues exactly: 4 + 4 epochs equal 8", "[cli][resume]") {
  const char* settings[] = {
      "--data toy --hidden 30,20 --batch-size 2 --lr 0.5 --seed 123",
      "--data toy --hidden 16,8 --batch-size 2 --lr 0.1 --momentum 0.9 --dropout 0.2 --seed 5",
      "--data toy --hidden 12 --batch-size 3 --lr 0.01 --optimizer adam --seed 9",
  };
  ScratchDir scratch("resume");
  for (const char* flags : settings) {
    INFO(flags);
    std::string common = std::string("train ") + flags + " --quiet --log-every 1";
    int code = -1;
    run_ember(common + " --epochs 8 --save " + scratch / "straight.st" + " --log " + scratch / "straight.jsonl", &code);
    REQUIRE(code == 0);
    run_ember(common + " --epochs 4 --save " + scratch / "half.st" + " --log " + scratch / "resumed.jsonl", &code);
    REQUIRE(code == 0);
    ember::Metadata half_metadata;
    ember::load(scratch / "half.st", &half_metadata);
    CHECK(half_metadata.at("epoch") == "4");
    run_ember(common + " --epochs 8 --resume " + scratch / "half.st" + " --save " + scratch / "resumed.st" + " --log " +
                  scratch / "resumed.jsonl",
              &code);
    REQUIRE(code == 0);

    ember::Metadata straight_metadata, resumed_metadata;
    ember::nn::StateDict straight = ember::load(scratch / "straight.st", &straight_metadata);
    ember::nn::StateDict resumed = ember::load(scratch / "resumed.st", &resumed_metadata);
    require_identical(straight, resumed);  // model.* and optimizer.* tensors
    CHECK(straight_metadata.at("generator") == resumed_metadata.at("generator"));
    CHECK(straight_metadata.at("step") == resumed_metadata.at("step"));
    // The log of the two resumed halves is the log of the straight run, loss for loss.
    CHECK(logged_step_losses(scratch / "resumed.jsonl") == logged_step_losses(scratch / "straight.jsonl"));
  }
}

TEST_CASE("ember train --resume with a checkpoint of another model lists keys and shapes", "[cli][resume]") {
  ScratchDir scratch("mismatch");
  int code = -1;
  run_ember("train --data toy --hidden 30,20 --epochs 1 --quiet --save " + scratch / "ck.st", &code);
  REQUIRE(code == 0);
  std::string output =
      run_ember("train --data toy --hidden 10 --epochs 2 --quiet --resume " + scratch / "ck.st", &code);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains("the checkpoint does not fit the model"));
  CHECK_THAT(output, Catch::Contains("size mismatch for 0.weight: checkpoint [30, 2], model [10, 2]"));
  CHECK_THAT(output, Catch::Contains("size mismatch for 2.weight: checkpoint [20, 30], model [2, 10]"));
  CHECK_THAT(output, Catch::Contains("unexpected key 4.bias (checkpoint [2])"));

  // A file that is not a checkpoint at all.
  write_bytes(scratch / "junk.st", "definitely not safetensors");
  output = run_ember("train --data toy --quiet --resume " + scratch / "junk.st", &code);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains("ember: error:"));
  CHECK_THAT(output, Catch::Contains(scratch / "junk.st"));
}

TEST_CASE("ember train --log writes step, epoch and summary lines", "[cli][log]") {
  ScratchDir scratch("log");
  int code = -1;
  std::string output = run_ember("train --data idx:" + fixtures_dir() +
                                     "/idx --hidden 8 --epochs 3 --batch-size 4 --val-split 0.25 --seed 2 --quiet "
                                     "--log-every 2 --log " + scratch / "log.jsonl",
                                 &code);
  REQUIRE(code == 0);
  std::vector<nlohmann::json> entries = log_entries(scratch / "log.jsonl");
  // 18 training examples / batch 4 = 5 steps per epoch, 15 in all: steps 2, 4, ..., 14.
  int steps = 0, epochs = 0, summaries = 0;
  for (const auto& entry : entries) {
    std::string event = entry.at("event");
    if (event == "step") {
      ++steps;
      CHECK(entry.at("step").get<int>() % 2 == 0);
      CHECK(entry.at("loss").get<double>() > 0);
    } else if (event == "epoch") {
      ++epochs;
      CHECK(entry.at("epoch").get<int>() == epochs);
      for (const char* key : {"train_loss", "train_acc", "val_acc", "samples_per_s", "elapsed_s"}) {
        INFO(key);
        CHECK(entry.at(key).is_number());
      }
    } else {
      CHECK(event == "summary");
      ++summaries;
      for (const char* key : {"train_acc", "val_acc", "test_acc", "elapsed_s"}) CHECK(entry.at(key).is_number());
      CHECK(entry.at("device") == "cpu");
    }
  }
  CHECK(steps == 7);
  CHECK(epochs == 3);
  CHECK(summaries == 1);
  CHECK(entries.back().at("event") == "summary");
}

TEST_CASE("Ctrl-C stops ember train at a batch boundary and keeps the last checkpoint", "[cli][interrupt]") {
  ScratchDir scratch("interrupt");
  // A run far too long to finish: interrupt it once its first checkpoint exists.
  std::string ember = std::string(EMBER_BIN_DIR) + "/ember";
  std::string checkpoint = scratch / "ck.st";
  std::string script = "sh -c '" + ember + " train --data toy --hidden 8 --epochs 100000000 --quiet --save " +
                       checkpoint + " & pid=$!; while [ ! -f " + checkpoint +
                       " ]; do sleep 0.05; done; sleep 0.2; kill -INT $pid; wait $pid; echo exit=$?' 2>&1";
  FILE* pipe = popen(script.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string output;
  char buffer[4096];
  std::size_t count;
  while ((count = fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, count);
  pclose(pipe);
  INFO(output);
  CHECK_THAT(output, Catch::Contains("exit=130"));
  CHECK_THAT(output, Catch::Contains("ember: interrupted during epoch"));
  CHECK_THAT(output, Catch::Contains("is intact"));
  // The checkpoint on disk is a complete one from a finished epoch.
  ember::Metadata metadata;
  ember::nn::StateDict state = ember::load(checkpoint, &metadata);
  CHECK(std::stoll(metadata.at("epoch")) >= 1);
  CHECK(state.find("model.0.weight") != nullptr);
}
