// tests/apps/test_cli_resume.cpp — checkpoints, exact --resume and its checks, the metrics log.
//
// The promise: training 4 epochs, stopping, and resuming for 4 more gives bit-identical
// parameters (and optimizer state) to 8 epochs in one go — for plain SGD, momentum with
// dropout (whose masks come from the generator the checkpoint restores) and Adam, on the
// toy data and on the IDX fixture (with a validation split, --drop-last and workers), and
// under --precision bf16 and fp16 (the loss scaler's state included).
// A resume with other options than the checkpoint's is refused, listing them, unless
// --allow-config-change; what the summary says about the checkpoint is true.
// (Ctrl-C: test_cli_interrupt.cpp.)
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <ember/core/cuda_hooks.h>
#include <ember/core/factories.h>
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
  const std::string idx = "--data idx:" + fixtures_dir() + "/idx";
  const std::string settings[] = {
      "--data toy --hidden 30,20 --batch-size 2 --lr 0.5 --seed 123",
      "--data toy --hidden 16,8 --batch-size 2 --lr 0.1 --momentum 0.9 --dropout 0.2 --seed 5",
      "--data toy --hidden 12 --batch-size 3 --lr 0.01 --optimizer adam --seed 9",
      idx + " --hidden 12,6 --batch-size 5 --lr 0.3 --momentum 0.9 --nesterov --dropout 0.2 --val-split 0.25 "
            "--drop-last --seed 4",
      idx + " --hidden 8 --batch-size 4 --lr 0.01 --optimizer adamw --weight-decay 0.1 --dropout 0.1 --workers 2 "
            "--seed 6",
      // Mixed precision (on the CPU, as the runs above; a GPU's is the case below); fp16's loss
      // scale and its growth count are in the checkpoint (grad_scaler.*).
      idx + " --hidden 12,6 --batch-size 5 --lr 0.3 --momentum 0.9 --seed 4 --precision bf16 --device cpu",
      "--data toy --hidden 30,20 --batch-size 2 --lr 0.5 --seed 123 --precision fp16 --device cpu",
  };
  ScratchDir scratch("resume");
  for (const std::string& flags : settings) {
    INFO(flags);
    std::string common = "train " + flags + " --quiet --log-every 1";
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

TEST_CASE("ember train --precision fp16 saves the loss scaler, and --resume refuses another precision", "[cli][resume]") {
  ScratchDir scratch("resume_precision");
  const std::string common = "train --data toy --hidden 8 --batch-size 2 --lr 0.1 --seed 1 --quiet --device cpu";
  int code = -1;
  run_ember(common + " --epochs 1 --precision fp16 --save " + scratch / "fp16.st", &code);
  REQUIRE(code == 0);
  const ember::nn::StateDict saved = ember::load(scratch / "fp16.st");
  REQUIRE(saved.find("grad_scaler.scale") != nullptr);
  CHECK(saved.find("grad_scaler.scale")->item<double>() == 65536.0);  // no overflow in 3 toy steps
  CHECK(saved.find("grad_scaler._growth_tracker")->item<std::int64_t>() == 3);
  const std::string output =
      run_ember(common + " --epochs 2 --precision bf16 --resume " + scratch / "fp16.st", &code);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains("--precision"));
  // A damaged scale (NaN would skip every step, silently) is a data error naming the file.
  ember::Metadata metadata;
  ember::nn::StateDict damaged = ember::load(scratch / "fp16.st", &metadata);
  damaged.insert("grad_scaler.scale", ember::full({}, NAN, ember::kFloat64));
  ember::save(damaged, scratch / "damaged.st", metadata);
  const std::string refused = run_ember(common + " --epochs 2 --precision fp16 --resume " + scratch / "damaged.st", &code);
  CHECK(code == 1);
  CHECK_THAT(refused, Catch::Contains("damaged.st: GradScaler state_dict: \"scale\" must be a positive finite"));
}

TEST_CASE("ember train --resume with a checkpoint of another model lists keys and shapes", "[cli][resume]") {
  ScratchDir scratch("mismatch");
  int code = -1;
  run_ember("train --data toy --hidden 30,20 --epochs 1 --quiet --save " + scratch / "ck.st", &code);
  REQUIRE(code == 0);
  // Other --hidden is first an option mismatch; allowed, the tensors still cannot fit.
  std::string output =
      run_ember("train --data toy --hidden 10 --epochs 2 --quiet --resume " + scratch / "ck.st", &code);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains("--hidden: checkpoint 30,20, now 10"));
  output = run_ember("train --data toy --hidden 10 --epochs 2 --quiet --allow-config-change --resume " + scratch / "ck.st",
                     &code);
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

namespace {

// Trains on `device` (ember train's --device) with --log and checks the log's lines; the
// summary line names the device the run resolved to (`expected_device`).
void check_metrics_log(const std::string& device, const std::string& expected_device) {
  ScratchDir scratch("log");
  int code = -1;
  std::string output = run_ember("train --data idx:" + fixtures_dir() + "/idx --device " + device +
                                     " --hidden 8 --epochs 3 --batch-size 4 --val-split 0.25 --seed 2 --quiet "
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
      CHECK(entry.at("device") == expected_device);
    }
  }
  CHECK(steps == 7);
  CHECK(epochs == 3);
  CHECK(summaries == 1);
  CHECK(entries.back().at("event") == "summary");
}

}  // namespace

TEST_CASE("ember train --log writes step, epoch and summary lines", "[cli][log]") {
  check_metrics_log("cpu", "cpu");
}

TEST_CASE("ember train --log on a GPU: the same lines, the summary names cuda:0", "[cli][log][gpu]") {
  if (!ember::cuda::is_available()) EMBER_SKIP("no CUDA GPU visible (ember::cuda::is_available() is false)");
  check_metrics_log("cuda", "cuda:0");
}

TEST_CASE("ember train --precision bf16 and fp16 on a GPU: the CPU run's losses, to 16-bit tolerance", "[cli][gpu]") {
  if (!ember::cuda::is_available()) EMBER_SKIP("no CUDA GPU visible (ember::cuda::is_available() is false)");
  ScratchDir scratch("precision_gpu");
  const std::string idx = "--data idx:" + fixtures_dir() + "/idx";
  for (const std::string precision : {"bf16", "fp16"}) {
    std::vector<double> losses[2];
    for (int gpu = 0; gpu < 2; ++gpu) {
      const std::string log = scratch / (precision + (gpu != 0 ? "_cuda.jsonl" : "_cpu.jsonl"));
      int code = -1;
      const std::string output = run_ember("train " + idx + " --hidden 12,6 --batch-size 5 --lr 0.3 --seed 4 --epochs 3 "
                                           "--quiet --log-every 1 --precision " + precision + " --device " +
                                           (gpu != 0 ? "cuda" : "cpu") + " --log " + log, &code);
      INFO(precision << (gpu != 0 ? " on cuda" : " on cpu") << ": " << output);
      REQUIRE(code == 0);
      losses[gpu] = logged_step_losses(log);
    }
    INFO(precision);
    REQUIRE(losses[1].size() == losses[0].size());
    REQUIRE_FALSE(losses[0].empty());
    // The GPU widens its 16-bit products to float32 and sums in another order: a few units of
    // the 16-bit format apart per step, not a different run.
    for (std::size_t i = 0; i < losses[0].size(); ++i) CHECK(losses[1][i] == Approx(losses[0][i]).epsilon(0.05));
  }
}

TEST_CASE("ember train --save records the run's options in the checkpoint's config", "[cli][resume]") {
  ScratchDir scratch("config");
  std::string data = "idx:" + fixtures_dir() + "/idx";
  int code = -1;
  run_ember("train --data " + data + " --hidden 12,6 --dropout 0.25 --epochs 2 --batch-size 5 --lr 0.3 --momentum 0.9 "
            "--nesterov --weight-decay 0.001 --seed 77 --drop-last --val-split 0.25 --workers 2 --quiet --save " +
                scratch / "ck.st",
            &code);
  REQUIRE(code == 0);
  ember::Metadata metadata;
  ember::load(scratch / "ck.st", &metadata);
  CHECK(metadata.at("format") == "ember-cli-checkpoint/1");
  CHECK(metadata.at("epoch") == "2");
  CHECK(metadata.at("step") == "6");  // 18 training examples in batches of 5, the last 3 dropped: 3 steps an epoch
  auto config = nlohmann::json::parse(metadata.at("config"));
  CHECK(config.at("in_features") == 16);
  CHECK(config.at("hidden") == nlohmann::json({12, 6}));
  CHECK(config.at("num_classes") == 3);
  CHECK(config.at("dropout") == 0.25);
  CHECK(config.at("data") == data);
  CHECK(config.at("class_names") == nlohmann::json({"0", "1", "2"}));
  const auto& train = config.at("train");
  CHECK(train.at("epochs") == 2);
  CHECK(train.at("batch_size") == 5);
  CHECK(train.at("lr") == 0.3);
  CHECK(train.at("momentum") == 0.9);
  CHECK(train.at("nesterov") == true);
  CHECK(train.at("weight_decay") == 0.001);
  CHECK(train.at("optimizer") == "sgd");
  CHECK(train.at("seed") == 77);
  CHECK(train.at("drop_last") == true);
  CHECK(train.at("val_split") == 0.25);
  CHECK(train.at("workers") == 2);

  // A CSV run records the header as the file had it, decided from its first line.
  for (auto [file, header] : {std::pair<const char*, bool>{"tiny.csv", true}, {"tiny_noheader.csv", false}}) {
    INFO(file);
    run_ember("train --data csv:" + fixtures_dir() + "/" + file + " --hidden 5 --epochs 1 --quiet --save " +
                  scratch / "csv.st",
              &code);
    REQUIRE(code == 0);
    ember::load(scratch / "csv.st", &metadata);
    auto csv_train = nlohmann::json::parse(metadata.at("config")).at("train");
    CHECK(csv_train.at("csv_header") == header);
    CHECK(csv_train.at("csv_label_column") == 0);
  }
}

TEST_CASE("ember train --resume refuses other options than the checkpoint's, listing them", "[cli][resume]") {
  ScratchDir scratch("resume_flags");
  const std::string base = "--data toy --hidden 8,4 --batch-size 2 --lr 0.2 --momentum 0.5 --seed 3";
  std::string checkpoint = scratch / "ck.st";
  int code = -1;
  run_ember("train " + base + " --epochs 2 --quiet --save " + checkpoint, &code);
  REQUIRE(code == 0);
  const std::string before = read_file(checkpoint);

  struct Case {
    std::string flags;
    std::vector<std::string> differences;
  };
  const Case cases[] = {
      {"--data toy --hidden 8,4 --batch-size 2 --lr 0.1 --momentum 0.5 --seed 3", {"--lr: checkpoint 0.2, now 0.1"}},
      {"--data toy --hidden 8,4 --batch-size 3 --lr 0.2 --momentum 0.5 --seed 4",
       {"--batch-size: checkpoint 2, now 3", "--seed: checkpoint 3, now 4"}},
      {"--data toy --hidden 8,4 --batch-size 2 --lr 0.2 --momentum 0.9 --nesterov --weight-decay 0.01 --seed 3",
       {"--momentum: checkpoint 0.5, now 0.9", "--nesterov: checkpoint off, now on",
        "--weight-decay: checkpoint 0, now 0.01"}},
      {"--data toy --hidden 8,4 --batch-size 2 --lr 0.2 --optimizer adam --seed 3",
       {"--optimizer: checkpoint sgd, now adam", "--momentum: checkpoint 0.5, now 0"}},
      {base + " --dropout 0.1 --drop-last --val-split 0.2",
       {"--val-split: checkpoint 0, now 0.2", "--dropout: checkpoint 0, now 0.1", "--drop-last: checkpoint off, now on"}},
      {"--data toy --hidden 8 --batch-size 2 --lr 0.2 --momentum 0.5 --seed 3", {"--hidden: checkpoint 8,4, now 8"}},
      {"--data idx:" + fixtures_dir() + "/idx --hidden 8,4 --batch-size 2 --lr 0.2 --momentum 0.5 --seed 3",
       {"--data: checkpoint toy, now idx:" + fixtures_dir() + "/idx"}},
  };
  for (const Case& c : cases) {
    INFO(c.flags);
    std::string output = run_ember("train " + c.flags + " --epochs 4 --quiet --resume " + checkpoint, &code);
    CHECK(code == 1);
    CHECK_THAT(output, Catch::Contains("ember: error: --resume " + checkpoint +
                                       ": the checkpoint was trained with other options:"));
    for (const std::string& difference : c.differences) CHECK_THAT(output, Catch::Contains("\n  " + difference + "\n"));
    // Nothing else is listed: one line per difference between the heading and the advice.
    auto first = output.find("options:\n") + 9, last = output.find("resume with the checkpoint's values");
    REQUIRE(last != std::string::npos);
    std::string listed = output.substr(first, last - first);
    CHECK(std::count(listed.begin(), listed.end(), '\n') == static_cast<long>(c.differences.size()));
    CHECK_THAT(output, Catch::Contains("--allow-config-change"));
  }
  CHECK(read_file(checkpoint) == before);  // refused runs touch nothing

  // --epochs below the checkpoint's epoch.
  std::string output = run_ember("train " + base + " --epochs 1 --quiet --resume " + checkpoint, &code);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains("--epochs 1 is below the epoch of " + checkpoint + " (2)"));

  // --workers and --device do not change the numbers; a path spelled differently is the same data.
  output = run_ember("train " + base + " --workers 2 --device cpu --epochs 3 --quiet --resume " + checkpoint, &code);
  CHECK(code == 0);
  run_ember("train --data idx:" + fixtures_dir() + "/idx --hidden 4 --epochs 1 --quiet --save " + scratch / "idx.st",
            &code);
  REQUIRE(code == 0);
  output = run_ember("train --data idx:" + fixtures_dir() + "/./idx/ --hidden 4 --epochs 2 --quiet --resume " +
                         scratch / "idx.st",
                     &code);
  CHECK(code == 0);

  // --allow-config-change continues with the new options and says what changed.
  output = run_ember("train --data toy --hidden 8,4 --batch-size 2 --lr 0.05 --optimizer adam --seed 3 --epochs 3 "
                     "--allow-config-change --resume " + checkpoint + " --save " + scratch / "changed.st",
                     &code);
  INFO(output);
  CHECK(code == 0);
  CHECK_THAT(output, Catch::Contains("ember: warning: --allow-config-change: resuming " + checkpoint));
  CHECK_THAT(output, Catch::Contains("  --optimizer: checkpoint sgd, now adam\n"));
  CHECK_THAT(output, Catch::Contains("  --lr: checkpoint 0.2, now 0.05\n"));
  CHECK_THAT(output, Catch::Contains("(the optimizer changed: its state starts afresh)"));
  CHECK_THAT(output, Catch::Contains("resuming after epoch 2"));
  ember::Metadata metadata;
  ember::nn::StateDict changed = ember::load(scratch / "changed.st", &metadata);
  CHECK(metadata.at("epoch") == "3");
  CHECK(nlohmann::json::parse(metadata.at("config")).at("train").at("optimizer") == "adam");
  CHECK(changed.find("optimizer.state.0.exp_avg") != nullptr);
}

TEST_CASE("ember train --resume with nothing left to train says what it kept", "[cli][resume]") {
  ScratchDir scratch("nothing_left");
  const std::string flags = "train --data toy --hidden 6 --batch-size 2 --lr 0.3 --seed 8 --quiet";
  std::string checkpoint = scratch / "ck.st";
  int code = -1;
  run_ember(flags + " --epochs 3 --save " + checkpoint, &code);
  REQUIRE(code == 0);
  const std::string before = read_file(checkpoint);

  // Another --save: nothing was trained, so nothing was written there, and the summary says so.
  std::string output = run_ember(flags + " --epochs 3 --resume " + checkpoint + " --save " + scratch / "other.st", &code);
  CHECK(code == 0);
  CHECK_THAT(output, Catch::Contains("checkpoint:      not written: no epoch was left to train (" + checkpoint +
                                     " holds epoch 3)"));
  CHECK_THAT(output, Catch::Contains("no epoch trained"));
  CHECK(!std::filesystem::exists(scratch / "other.st"));
  // The same file: it is the checkpoint of epoch 3, untouched.
  output = run_ember(flags + " --epochs 3 --resume " + checkpoint + " --save " + checkpoint, &code);
  CHECK(code == 0);
  CHECK_THAT(output, Catch::Contains("checkpoint:      " + checkpoint + " (epoch 3, unchanged: no epoch was left to train)"));
  CHECK(read_file(checkpoint) == before);
  // One more epoch is written and named.
  output = run_ember(flags + " --epochs 4 --resume " + checkpoint + " --save " + scratch / "other.st", &code);
  CHECK(code == 0);
  CHECK_THAT(output, Catch::Contains("checkpoint:      " + scratch / "other.st" + " (epoch 4)"));
}
