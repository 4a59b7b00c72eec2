// tests/apps/test_cli_hostile_model.cpp — hostile and careless inputs about the model, the
// data and the checkpoint's contents (issue 16): each gets a clear message and the right
// exit code (2: the command line, 1: the data or checkpoint or run), never a signal or a
// silent wrong result.
//
//   - layer widths, batch sizes, worker counts and hyperparameters out of range (exit 2);
//   - a checkpoint whose config does not match its tensors (a width of 2^62), whose epoch is
//     "-5" or "2abc", or whose weight is int32: refused before any model is built (exit 1);
//   - --resume --allow-config-change --lr/--momentum/--weight-decay: the new values are used
//     (a step's update scales with the new lr) and recorded;
//   - non-finite CSV features (exit 1, file/line/column), a non-finite loss (exit 1, the last
//     good checkpoint intact; --no-stop-on-nan opts out);
//   - --num-classes and sparse labels; the input scale recorded and applied by predict;
//   - the world size recorded and compared on --resume; --seed -1 as torch.manual_seed(-1);
//   - a UTF-8 BOM; worker threads that cannot start.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <ember/core/address_sanitizer.h>
#include <ember/core/factories.h>
#include <ember/nn/serialize.h>

#include "test_cli_helpers.h"

using namespace ember::testing;
using namespace ember::testing::cli;

namespace {

// Rewrites a checkpoint: `edit` may change its tensors and metadata.
template <class Edit>
void edit_checkpoint(const std::string& from, const std::string& to, Edit edit) {
  ember::Metadata metadata;
  ember::nn::StateDict tensors = ember::load(from, &metadata);
  edit(tensors, metadata);
  ember::save(tensors, to, metadata);
}

std::vector<float> values_of(const ember::Tensor& tensor) {
  ember::Tensor flat = tensor.contiguous();
  const float* data = flat.data_ptr<float>();
  return std::vector<float>(data, data + flat.numel());
}

}  // namespace

TEST_CASE("ember: sizes, counts and hyperparameters out of range are usage errors (exit 2)", "[cli][hostile]") {
  struct Case {
    std::string arguments, message;
  };
  const std::vector<Case> cases = {
      {"train --data toy --hidden 4611686018427387904", "--hidden: must be at most 2147483647, got 4611686018427387904"},
      {"train --data toy --hidden 8,99999999999999999999", "--hidden: must be at most 2147483647"},
      {"train --data toy --batch-size 9223372036854775807",
       "--batch-size: must be at most 2147483647, got 9223372036854775807"},
      {"eval --checkpoint /dev/null --batch-size 9223372036854775807", "--batch-size: must be at most 2147483647"},
      {"train --data toy --workers 100000", "--workers: must be at most 256, got 100000"},
      {"train --data toy --lr nan", "--lr: must be a finite number (float32 range), got nan"},
      {"train --data toy --lr inf", "--lr: must be a finite number (float32 range), got inf"},
      {"train --data toy --lr 1e39", "--lr: must be a finite number (float32 range), got 1e39"},
      {"train --data toy --lr 1e400", "--lr: must be a finite number (float32 range), got 1e400"},
      {"train --data toy --momentum nan", "--momentum: must be a finite number"},
      {"train --data toy --weight-decay inf", "--weight-decay: must be a finite number"},
      {"train --data toy --input-scale nan", "--input-scale: must be a finite number"},
      {"train --data toy --num-classes 0", "--num-classes: must be at least 1"},
      {"train --data toy --epochs -99999999999999999999", "--epochs: must be at least 1, got -99999999999999999999"},
      {"train --data toy --seed 18446744073709551616", "--seed: must be in [-9223372036854775808, 18446744073709551615]"},
      {"frobnicate", "ember: error: unknown command 'frobnicate' (expected train, eval, predict, sample, info or plot)"},
  };
  for (const Case& c : cases) {
    INFO("ember " << c.arguments);
    int code = -1;
    std::string output = run_ember(c.arguments, &code);
    INFO(output);
    CHECK(code == 2);
    CHECK_THAT(output, Catch::Contains(c.message));
  }
}

TEST_CASE("ember train: a model larger than memory, or a label too large for a class, is refused before allocating",
          "[cli][hostile]") {
  int code = -1;
  std::string output = run_ember("train --data toy --hidden 2147483647,2147483647 --epochs 1", &code);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains("ember: error: the 2-2147483647-2147483647-2 MLP has more than 2^63 parameters: "
                                     "as float32 they need more than this machine's "));
  ScratchDir scratch("hostile_sizes");
  write_bytes(scratch / "big.csv", "0,1\n9223372036854775807,2\n");
  output = run_ember("train --data csv:" + scratch / "big.csv" + " --epochs 1", &code);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains("big.csv: label 9223372036854775807 is too large for a class index (at most "
                                     "2147483646)"));
  write_bytes(scratch / "far.csv", "0,1\n2000000000,2\n");
  output = run_ember("train --data csv:" + scratch / "far.csv" + " --epochs 1", &code);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains("far.csv: the labels use at most 2 of the 2000000001 classes"));
}

TEST_CASE("ember: a checkpoint's config is checked against its tensors before any model is built", "[cli][hostile]") {
  ScratchDir scratch("hostile_config");
  int code = -1;
  run_ember("train --data toy --hidden 30,20 --epochs 1 --quiet --save " + scratch / "ck.st", &code);
  REQUIRE(code == 0);
  auto with_config = [&](const std::string& name, auto change) {
    edit_checkpoint(scratch / "ck.st", scratch / name, [&](ember::nn::StateDict&, ember::Metadata& metadata) {
      nlohmann::json config = nlohmann::json::parse(metadata.at("config"));
      change(config);
      metadata["config"] = config.dump();
    });
    return scratch / name;
  };
  std::string huge = with_config("huge.st", [](nlohmann::json& c) { c["hidden"] = {4611686018427387904LL, 20}; });
  std::string other = with_config("other.st", [](nlohmann::json& c) { c["hidden"] = {31, 20}; });
  std::string negative = with_config("negative.st", [](nlohmann::json& c) { c["num_classes"] = -3; });
  // Before: eval on huge.st overflowed numel * itemsize and wrote past a heap buffer (exit 139).
  for (const std::string& command : {"eval --checkpoint " + huge, "predict --checkpoint " + huge + " --input " + huge,
                                     "train --data toy --hidden 30,20 --epochs 2 --resume " + huge}) {
    INFO(command);
    std::string output = run_ember(command, &code);
    INFO(output);
    CHECK(code == 1);
    CHECK_THAT(output, Catch::Contains("huge.st: the checkpoint's model config does not match its tensors:"));
    CHECK_THAT(output, Catch::Contains("a hidden width 4611686018427387904 is outside [1, 2147483647]"));
  }
  std::string output = run_ember("eval --checkpoint " + other, &code);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains("model.0.weight is [30, 2] but the config says [31, 2]"));
  CHECK_THAT(output, Catch::Contains("model.2.weight is [20, 30] but the config says [20, 31]"));
  output = run_ember("eval --checkpoint " + negative, &code);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains("num_classes -3 is outside [1, 2147483647]"));
  // Every config ember train writes passes the check: --dropout 1 (torch.nn.Dropout(1)) too.
  run_ember("train --data toy --hidden 4 --dropout 1 --epochs 1 --quiet --save " + scratch / "dropout1.st", &code);
  REQUIRE(code == 0);
  run_ember("eval --checkpoint " + scratch / "dropout1.st", &code);
  CHECK(code == 0);
}

// checkpoint_fuzzer found "in_features": 5.55556e+48: nlohmann's get<int64_t>() cast it with
// undefined behaviour, and a 2.5 would have become 2 silently (apps/cli/json_field.h).
TEST_CASE("ember: a checkpoint's whole-number config fields refuse fractions, huge floats and wrong signs", "[cli][hostile]") {
  ScratchDir scratch("hostile_whole_numbers");
  int code = -1;
  run_ember("train --data toy --hidden 8 --epochs 2 --quiet --save " + scratch / "ck.st", &code);
  REQUIRE(code == 0);
  const std::vector<std::pair<std::string, std::function<void(nlohmann::json&)>>> damages = {
      {"5.55556e+48 is not a whole number", [](nlohmann::json& c) { c["in_features"] = 5.55556e48; }},
      {"2.5 is not a whole number", [](nlohmann::json& c) { c["train"]["epochs"] = 2.5; }},
      {"8.0 is not a whole number", [](nlohmann::json& c) { c["hidden"] = {8.0}; }},
      {"-1 is not a non-negative whole number", [](nlohmann::json& c) { c["train"]["seed"] = -1; }},
      {"18446744073709551615 is not a whole number", [](nlohmann::json& c) { c["num_classes"] = ~0ULL; }},
      {"3.0 is not a whole number", [](nlohmann::json& c) { c["train"]["grad_accum"] = 3.0; }},
  };
  for (const auto& [message, damage] : damages) {
    const auto& damage_config = damage;  // the lambda captures this (clang before 16 cannot capture a binding)
    edit_checkpoint(scratch / "ck.st", scratch / "bad.st", [&](ember::nn::StateDict&, ember::Metadata& metadata) {
      nlohmann::json config = nlohmann::json::parse(metadata.at("config"));
      damage_config(config);
      metadata["config"] = config.dump();
    });
    std::string output = run_ember("eval --checkpoint " + scratch / "bad.st", &code);
    INFO(output);
    CHECK(code == 1);
    CHECK_THAT(output, Catch::Contains(scratch / "bad.st" + ": the checkpoint's config metadata is damaged"));
    CHECK_THAT(output, Catch::Contains(message));
  }
}

TEST_CASE("ember: checkpoint metadata is validated (epoch, step, tensor dtypes)", "[cli][hostile]") {
  ScratchDir scratch("hostile_metadata");
  int code = -1;
  run_ember("train --data toy --hidden 8 --epochs 2 --quiet --save " + scratch / "ck.st", &code);
  REQUIRE(code == 0);
  for (std::string epoch : {"-5", "2abc", "", " 2", "99999999999999999999"}) {
    INFO("epoch \"" << epoch << "\"");
    edit_checkpoint(scratch / "ck.st", scratch / "bad.st",
                    [&](ember::nn::StateDict&, ember::Metadata& metadata) { metadata["epoch"] = epoch; });
    std::string output = run_ember("eval --checkpoint " + scratch / "bad.st", &code);
    INFO(output);
    CHECK(code == 1);
    CHECK_THAT(output, Catch::Contains("bad.st: the checkpoint's \"epoch\" metadata is \"" + epoch +
                                       "\", not a non-negative whole number"));
  }
  edit_checkpoint(scratch / "ck.st", scratch / "beyond.st",
                  [&](ember::nn::StateDict&, ember::Metadata& metadata) { metadata["epoch"] = "7"; });
  CHECK_THAT(run_ember("eval --checkpoint " + scratch / "beyond.st", &code),
             Catch::Contains("the checkpoint's epoch 7 is beyond its run's 2 epochs"));
  CHECK(code == 1);
  // Before: an int32 weight was converted silently.
  edit_checkpoint(scratch / "ck.st", scratch / "int.st", [&](ember::nn::StateDict& tensors, ember::Metadata&) {
    ember::nn::StateDict changed;
    for (const auto& [name, tensor] : tensors) {
      changed.insert(name, name == "model.0.weight" ? tensor.to(ember::kInt32) : tensor);
    }
    tensors = changed;
  });
  std::string output = run_ember("predict --checkpoint " + scratch / "int.st" + " --input " + scratch / "int.st", &code);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains("model.0.weight has dtype int32, expected float32"));
}

TEST_CASE("ember train --resume --allow-config-change: the new lr, momentum and weight decay are used and recorded",
          "[cli][hostile][resume]") {
  ScratchDir scratch("hostile_lr");
  int code = -1;
  // One full batch per epoch (toy: 5 examples), so every epoch is one step on the same data.
  const std::string base = "train --data toy --hidden 6 --batch-size 5 --seed 3 --quiet";
  run_ember(base + " --lr 0.5 --epochs 1 --save " + scratch / "start.st", &code);
  REQUIRE(code == 0);
  auto resume_with = [&](const std::string& flags, const std::string& name) {
    std::string output = run_ember(base + " --epochs 2 --allow-config-change --resume " + scratch / "start.st" + " " +
                                       flags + " --save " + scratch / name,
                                   &code);
    INFO(output);
    REQUIRE(code == 0);
    ember::Metadata metadata;
    ember::nn::StateDict state = ember::load(scratch / name, &metadata);
    return std::make_pair(state, nlohmann::json::parse(metadata.at("config")).at("train"));
  };
  ember::nn::StateDict start = ember::load(scratch / "start.st");
  auto [small, small_config] = resume_with("--lr 0.01", "small.st");
  auto [large, large_config] = resume_with("--lr 0.02", "large.st");
  CHECK(small_config.at("lr").get<double>() == 0.01);
  CHECK(large_config.at("lr").get<double>() == 0.02);
  // Plain SGD: update = -lr * gradient, the gradient the same in both runs. Before the fix
  // both used the checkpoint's lr 0.5 and the two updates were equal.
  const std::string weight = "model.0.weight";
  std::vector<float> before = values_of(*start.find(weight)), after_small = values_of(*small.find(weight)),
                     after_large = values_of(*large.find(weight));
  double largest_update = 0;
  for (std::size_t i = 0; i < before.size(); ++i) {
    double small_update = after_small[i] - before[i], large_update = after_large[i] - before[i];
    CHECK(large_update == Approx(2 * small_update).margin(1e-6));
    largest_update = std::max(largest_update, std::fabs(small_update));
  }
  CHECK(largest_update > 1e-5);  // the step did change the weights

  // Momentum and weight decay are this run's too (and recorded as such).
  auto [moved, moved_config] = resume_with("--lr 0.01 --momentum 0.9 --weight-decay 0.1", "moved.st");
  CHECK(moved_config.at("momentum").get<double>() == 0.9);
  CHECK(moved_config.at("weight_decay").get<double>() == 0.1);
  ember::Tensor momentum = *moved.find("optimizer.param_groups.0.momentum");
  CHECK(momentum.item<double>() == 0.9);
  CHECK(moved.find("optimizer.param_groups.0.weight_decay")->item<double>() == 0.1);
  CHECK(moved.find("optimizer.param_groups.0.lr")->item<double>() == 0.01);
}

TEST_CASE("ember train: non-finite CSV features are data errors naming file, line and column", "[cli][hostile]") {
  ScratchDir scratch("hostile_nan_csv");
  for (std::string cell : {"nan", "inf", "-inf", "1e39"}) {
    INFO(cell);
    write_bytes(scratch / "data.csv", "0,1,2\n1,3," + cell + "\n0,5,6\n1,7,8\n");
    int code = -1;
    std::string output = run_ember("train --data csv:" + scratch / "data.csv" + " --epochs 1 --quiet", &code);
    CHECK(code == 1);
    CHECK_THAT(output, Catch::Contains("data.csv: line 2, column 3: \"" + cell + "\" is not a finite float32 number"));
  }
}

TEST_CASE("ember predict: a float IDX input holding nan is a data error", "[cli][hostile]") {
  ScratchDir scratch("hostile_nan_idx");
  int code = -1;
  run_ember("train --data toy --hidden 4 --epochs 1 --quiet --save " + scratch / "toy.st", &code);
  REQUIRE(code == 0);
  // IDX float32 [2, 2]: 1, 2, nan, 4 (big-endian).
  write_bytes(scratch / "input-idx2", std::string("\x00\x00\x0D\x02\x00\x00\x00\x02\x00\x00\x00\x02", 12) +
                                          std::string("\x3F\x80\x00\x00\x40\x00\x00\x00\x7F\xC0\x00\x00\x40\x80\x00\x00", 16));
  std::string output = run_ember("predict --checkpoint " + scratch / "toy.st" + " --input " + scratch / "input-idx2",
                                 &code);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains("input-idx2: value 2 of the input is not finite (nan after the input scale)"));
}

TEST_CASE("ember train: a non-finite loss stops training, the last good checkpoint intact", "[cli][hostile]") {
  ScratchDir scratch("hostile_nan_loss");
  int code = -1;
  const std::string base = "train --data toy --hidden 8 --batch-size 5 --seed 1 --quiet";
  run_ember(base + " --epochs 1 --save " + scratch / "ck.st", &code);
  REQUIRE(code == 0);
  // A learning rate of 3e38 sends the weights to inf in one step: the next loss is nan.
  std::string output = run_ember(base + " --epochs 4 --allow-config-change --lr 3e38 --resume " + scratch / "ck.st" +
                                     " --save " + scratch / "ck.st",
                                 &code);
  INFO(output);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Matches("(.|\n)*ember: error: the training loss is (nan|inf|-nan) at epoch 3, step 3 "
                                    "\\(batch 1 of 1\\); stopping: the checkpoint of epoch 2 in (.|\n)*ck.st is "
                                    "intact(.|\n)*--no-stop-on-nan(.|\n)*"));
  ember::Metadata metadata;
  ember::nn::StateDict kept = ember::load(scratch / "ck.st", &metadata);
  CHECK(metadata.at("epoch") == "2");
  for (const auto& [name, tensor] : kept) {
    INFO(name);
    if (tensor.dtype() == ember::kFloat32) {
      for (float value : values_of(tensor)) CHECK(std::isfinite(value));
    }
  }
  // --no-stop-on-nan: the run goes on (as before the fix).
  run_ember(base + " --epochs 4 --allow-config-change --lr 3e38 --no-stop-on-nan --resume " + scratch / "ck.st" +
                " --save " + scratch / "nan.st",
            &code);
  CHECK(code == 0);
}

TEST_CASE("ember train: --num-classes, and sparse labels refused without it", "[cli][hostile]") {
  ScratchDir scratch("hostile_classes");
  // Three classes and one stray label 255: before, a 256-way classifier was built silently.
  write_bytes(scratch / "stray.csv", "0,1,2\n1,3,4\n2,5,6\n255,7,8\n0,2,2\n");
  int code = -1;
  std::string output = run_ember("train --data csv:" + scratch / "stray.csv" + " --epochs 1 --quiet", &code);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains("stray.csv: the labels use only 4 of the 256 classes 0..255 (largest label "
                                     "255); is the label column right? If these are the classes, say so with "
                                     "--num-classes 256"));
  output = run_ember("train --data csv:" + scratch / "stray.csv" + " --epochs 1 --quiet --num-classes 3", &code);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains("stray.csv: label 255 of example 3 is out of range for 3 classes"));
  // --label-column pointing at a feature column: refused the same way.
  output = run_ember("train --data csv:" + fixtures_dir() + "/tiny.csv --label-column 5 --epochs 1 --quiet", &code);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains("--num-classes"));
  // Said outright, the count is used and recorded.
  output = run_ember("train --data csv:" + scratch / "stray.csv" + " --epochs 1 --num-classes 256 --save " +
                         scratch / "wide.st",
                     &code);
  CHECK(code == 0);
  CHECK_THAT(output, Catch::Contains("2-256-128-256 MLP"));
  ember::Metadata metadata;
  ember::load(scratch / "wide.st", &metadata);
  CHECK(nlohmann::json::parse(metadata.at("config")).at("num_classes") == 256);
  // --num-classes above the labels: classes without examples are fine when asked for.
  write_bytes(scratch / "two.csv", "0,1,2\n1,3,4\n0,5,6\n");
  output = run_ember("train --data csv:" + scratch / "two.csv" + " --epochs 1 --num-classes 5 --quiet", &code);
  CHECK(code == 0);
  CHECK_THAT(output, Catch::Contains("2-256-128-5 MLP"));
}

TEST_CASE("ember predict applies the checkpoint's input scale: the tutorial's toy model on its five points",
          "[cli][hostile]") {
  ScratchDir scratch("hostile_scale");
  int code = -1;
  // The tutorial's §7 run (tests/reference/cli_reference.py's first configuration).
  std::string output = run_ember("train --data toy --hidden 30,20 --epochs 3 --batch-size 2 --lr 0.5 --seed 123 "
                                 "--drop-last --save " + scratch / "toy.st",
                                 &code);
  REQUIRE(code == 0);
  CHECK_THAT(output, Catch::Contains("  input scale 1, 2 classes\n"));
  write_bytes(scratch / "five.csv", "-1.2,3.1\n-0.9,2.9\n-0.5,2.6\n2.3,-1.1\n2.7,-1.5\n");
  // PyTorch's probabilities for the same model (tests/apps/expected/tutorial_07_training.txt,
  // printed by tests/reference/tutorial_07_training.py to 4 decimals). Before the fix the CSV
  // rows were divided by 255 and every row got p(0) = 0.46.
  const double expected[5][2] = {
      {0.9991, 0.0009}, {0.9982, 0.0018}, {0.9949, 0.0051}, {0.0491, 0.9509}, {0.0307, 0.9693}};
  auto check_predictions = [&](const std::string& checkpoint) {
    std::string json = run_program("ember", "predict --checkpoint " + checkpoint + " --input " + scratch / "five.csv" +
                                                " --json", &code);
    REQUIRE(code == 0);
    nlohmann::json predictions = nlohmann::json::parse(json).at("predictions");
    REQUIRE(predictions.size() == 5);
    for (int row = 0; row < 5; ++row) {
      for (int c = 0; c < 2; ++c) {
        INFO("row " << row << " class " << c);
        CHECK(predictions[row].at("probabilities")[c].get<double>() == Approx(expected[row][c]).margin(5.1e-5));
      }
    }
  };
  check_predictions(scratch / "toy.st");
  ember::Metadata metadata;
  ember::load(scratch / "toy.st", &metadata);
  CHECK(nlohmann::json::parse(metadata.at("config")).at("input_scale") == 1.0);

  // A checkpoint written before input_scale existed: toy data were used as given.
  edit_checkpoint(scratch / "toy.st", scratch / "old.st", [](ember::nn::StateDict&, ember::Metadata& m) {
    nlohmann::json config = nlohmann::json::parse(m.at("config"));
    config.erase("input_scale");
    m["config"] = config.dump();
  });
  check_predictions(scratch / "old.st");

  // IDX images: 1/255 by default, recorded; an old IDX checkpoint predicts the same.
  const std::string images = fixtures_dir() + "/idx/t10k-images-idx3-ubyte";
  output = run_ember("train --data idx:" + fixtures_dir() + "/idx --hidden 8 --epochs 1 --save " + scratch / "idx.st",
                     &code);
  REQUIRE(code == 0);
  CHECK_THAT(output, Catch::Contains("  input scale 1/255, 3 classes\n"));
  ember::load(scratch / "idx.st", &metadata);
  CHECK(nlohmann::json::parse(metadata.at("config")).at("input_scale").get<double>() == 1.0 / 255.0);
  edit_checkpoint(scratch / "idx.st", scratch / "old_idx.st", [](ember::nn::StateDict&, ember::Metadata& m) {
    nlohmann::json config = nlohmann::json::parse(m.at("config"));
    config.erase("input_scale");
    m["config"] = config.dump();
  });
  std::string now = run_program("ember", "predict --json --checkpoint " + scratch / "idx.st" + " --input " + images, &code);
  std::string old = run_program("ember", "predict --json --checkpoint " + scratch / "old_idx.st" + " --input " + images,
                                &code);
  CHECK(nlohmann::json::parse(now).at("predictions") == nlohmann::json::parse(old).at("predictions"));

  // CSV: 1 by default, --input-scale to say otherwise; eval applies the checkpoint's.
  output = run_ember("train --data csv:" + fixtures_dir() + "/tiny.csv --hidden 5 --epochs 3 --input-scale 0.3 --save " +
                         scratch / "csv.st",
                     &code);
  REQUIRE(code == 0);
  CHECK_THAT(output, Catch::Contains("  input scale 0.3, 3 classes\n"));
  ember::load(scratch / "csv.st", &metadata);
  CHECK(nlohmann::json::parse(metadata.at("config")).at("input_scale") == 0.3);
  // eval on the training file (its default) scales as training did: the same accuracy.
  auto accuracy_after = [](const std::string& text, const std::string& label) {
    std::size_t at = text.find(label);
    return at == std::string::npos ? std::string() : text.substr(at + label.size(), text.find('%', at) - at - label.size());
  };
  std::string evaluated = run_ember("eval --checkpoint " + scratch / "csv.st", &code);
  CHECK(code == 0);
  CHECK_THAT(evaluated, Catch::Contains("csv.st (16-5-3 MLP, epoch 3, trained on csv:"));
  CHECK_THAT(evaluated, Catch::Contains("tiny.csv, input scale 0.3)\n"));
  CHECK(accuracy_after(evaluated, "accuracy:   ") == accuracy_after(output, "train accuracy:  "));
  CHECK_FALSE(accuracy_after(output, "train accuracy:  ").empty());
}

TEST_CASE("ember train --resume: another world size is a config change", "[cli][hostile][resume]") {
  ScratchDir scratch("hostile_world");
  int code = -1;
  const std::string base = "train --data toy --hidden 6 --batch-size 2 --seed 3 --quiet";
  run_ember(base + " --epochs 1 --save " + scratch / "ck.st", &code);
  REQUIRE(code == 0);
  ember::Metadata metadata;
  ember::load(scratch / "ck.st", &metadata);
  CHECK(nlohmann::json::parse(metadata.at("config")).at("train").at("world_size") == 1);
  // As if written by 2 ranks (ember-run --nproc-per-node 2).
  edit_checkpoint(scratch / "ck.st", scratch / "two.st", [](ember::nn::StateDict&, ember::Metadata& m) {
    nlohmann::json config = nlohmann::json::parse(m.at("config"));
    config["train"]["world_size"] = 2;
    m["config"] = config.dump();
  });
  std::string output = run_ember(base + " --epochs 2 --resume " + scratch / "two.st", &code);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains("the checkpoint was trained with other options:\n  world size (ranks): "
                                     "checkpoint 2, now 1\n"));
  run_ember(base + " --epochs 2 --allow-config-change --resume " + scratch / "two.st", &code);
  CHECK(code == 0);
  // An older checkpoint without the field was written by one process.
  edit_checkpoint(scratch / "ck.st", scratch / "old.st", [](ember::nn::StateDict&, ember::Metadata& m) {
    nlohmann::json config = nlohmann::json::parse(m.at("config"));
    config["train"].erase("world_size");
    m["config"] = config.dump();
  });
  run_ember(base + " --epochs 2 --resume " + scratch / "old.st", &code);
  CHECK(code == 0);
}

TEST_CASE("ember train --seed -1 is torch.manual_seed(-1): the seed 2^64 - 1", "[cli][hostile]") {
  ScratchDir scratch("hostile_seed");
  int code = -1;
  std::string output = run_ember("train --data toy --hidden 4 --epochs 1 --seed -1 --save " + scratch / "a.st", &code);
  REQUIRE(code == 0);
  CHECK_THAT(output, Catch::Contains("seed 18446744073709551615"));
  run_ember("train --data toy --hidden 4 --epochs 1 --quiet --seed 18446744073709551615 --save " + scratch / "b.st",
            &code);
  REQUIRE(code == 0);
  ember::nn::StateDict a = ember::load(scratch / "a.st"), b = ember::load(scratch / "b.st");
  CHECK(a.find("model.0.weight")->equal(*b.find("model.0.weight")));
}

TEST_CASE("ember: a UTF-8 BOM does not turn the first CSV row into a header", "[cli][hostile]") {
  ScratchDir scratch("hostile_bom");
  write_bytes(scratch / "bom.csv", "\xEF\xBB\xBF" "0,1,2\n1,3,4\n0,5,6\n1,7,8\n");
  int code = -1;
  std::string output = run_ember("train --data csv:" + scratch / "bom.csv" + " --hidden 4 --epochs 1", &code);
  CHECK(code == 0);
  CHECK_THAT(output, Catch::Contains("(4 training, 0 validation"));  // before: 3 (the first row a header)
}

TEST_CASE("ember train: worker threads that cannot start are an error, not an abort", "[cli][hostile]") {
#if EMBER_ADDRESS_SANITIZER
  EMBER_SKIP("ulimit -v does not leave AddressSanitizer room to start");
#endif
  // Run `ember train --data toy` under `ulimit -v LIMIT_KB`; returns the exit code.
  auto run_limited = [](std::int64_t limit_kb, int workers, std::string* output) {
    std::string command = "sh -c 'ulimit -v " + std::to_string(limit_kb) + "; exec " + std::string(EMBER_BIN_DIR) +
                          "/ember train --data toy --workers " + std::to_string(workers) + " --epochs 1 --quiet' 2>&1";
    FILE* pipe = popen(command.c_str(), "r");
    REQUIRE(pipe != nullptr);
    char buffer[4096];
    for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) output->append(buffer, n);
    const int status = pclose(pipe);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  // The address space a run without workers needs depends on the build (a CUDA build maps
  // cuBLAS's large libraries), so find it: the smallest limit, to 16 MB, at which a run with
  // no workers succeeds. 400 MB more then fits the run and a few dozen 8 MiB worker stacks,
  // not 200. Before: "terminate called without an active exception" (SIGABRT).
  std::int64_t low = 16000, high = 64000000;  // KB; a run fits in `high`, not in `low`
  std::string probe_output;
  REQUIRE(run_limited(high, 0, &probe_output) == 0);
  while (high - low > 16000) {
    const std::int64_t middle = (low + high) / 2;
    std::string ignored;
    (run_limited(middle, 0, &ignored) == 0 ? high : low) = middle;
  }
  std::string output;
  const int code = run_limited(high + 400000, 200, &output);
  INFO(output);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains("ember: error: DataLoader: could not start worker thread "));
  CHECK_THAT(output, Catch::Contains(" of 200 ("));
}

TEST_CASE("ember train --resume of a 2-rank checkpoint on 1 rank is refused as a config change",
          "[cli][hostile][distributed]") {
  ScratchDir scratch("hostile_world_real");
  const std::string train =
      " train --device cpu --data idx:" + fixtures_dir() + "/idx --hidden 8 --batch-size 3 --seed 2 --quiet";
  std::string command = "timeout 120 " + std::string(EMBER_BIN_DIR) + "/ember-run --nproc-per-node 2 -- " +
                        std::string(EMBER_BIN_DIR) + "/ember" + train + " --epochs 1 --save " + scratch / "two.st" +
                        " > " + scratch / "two.out" + " 2>&1";
  int status = std::system(command.c_str());
  INFO(read_file(scratch / "two.out"));
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  ember::Metadata metadata;
  ember::load(scratch / "two.st", &metadata);
  CHECK(nlohmann::json::parse(metadata.at("config")).at("train").at("world_size") == 2);
  int code = -1;
  std::string output = run_ember(train + " --epochs 2 --resume " + scratch / "two.st", &code);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains("\n  world size (ranks): checkpoint 2, now 1\n"));
}
