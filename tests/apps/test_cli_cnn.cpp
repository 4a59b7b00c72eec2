// tests/apps/test_cli_cnn.cpp — `ember train --model cnn`: its flags, its checkpoints, its errors.
//
// The CNN's numbers are compared with PyTorch in test_cli_parity.cpp (cli_reference.json has
// CNN configurations); here: the flags that only a CNN takes, the image shape taken from IDX
// files or --input-shape, the layer names and shapes a checkpoint holds, eval and predict
// of a saved CNN, exact resume, and a checkpoint whose CNN config does not fit its tensors.
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include <ember/nn/serialize.h>

#include "test_cli_helpers.h"

using namespace ember::testing;
using namespace ember::testing::cli;

namespace {
// The CPU is what these tests mean (the CNN's parity with PyTorch is a CPU reference); on a
// machine with a GPU, --device auto would pick it.
std::string idx_data() { return "--device cpu --data idx:" + fixtures_dir() + "/idx"; }
std::string csv_data() { return "--device cpu --data csv:" + fixtures_dir() + "/tiny.csv"; }
}  // namespace

TEST_CASE("ember train --model cnn: flags that do not fit are usage errors (exit 2)", "[cli][cnn][usage]") {
  struct Case {
    std::string arguments, message;
  };
  const Case cases[] = {
      {"train --device cpu --data toy --channels 4", "--channels: only --model cnn takes it"},
      {"train --device cpu --data toy --input-shape 1,1,2", "--input-shape: only --model cnn takes it"},
      {"train --model cnn --dropout 0.5 " + idx_data(), "--dropout: --model cnn has no dropout layers"},
      {"train --model rnn " + idx_data(), "--model: expected mlp, cnn, gpt or spec:FILE.json, got 'rnn'"},
      {"train --model cnn --input-shape 1,16 " + csv_data(), "--input-shape"},
      {"train --model cnn --channels 0 " + idx_data(), "--channels"},
      // Found when the data is read: still the command line's fault.
      {"train --model cnn --epochs 1 " + csv_data(),
       "ember: error: --model cnn on csv:" + fixtures_dir() +
           "/tiny.csv needs --input-shape C,H,W (how each example's 16 features form an image)"},
      {"train --model cnn --epochs 1 --input-shape 1,4,5 " + csv_data(),
       "the input shape 1x4x5 does not hold 16 features"},
      {"train --model cnn --epochs 1 --input-shape 1,2,8 --channels 2,3 " + csv_data(),
       "images of 2x8 are too small for 2 pooling stages (at least 4x4)"},
      {"train --model cnn --epochs 1 --channels 2,3,4 " + idx_data(),
       "images of 4x4 are too small for 3 pooling stages (at least 8x8)"},
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

TEST_CASE("ember train --model cnn saves PyTorch's layer names; eval and predict read the CNN back", "[cli][cnn]") {
  ScratchDir scratch("cnn_roundtrip");
  const std::string checkpoint = scratch / "cnn.st";
  int code = -1;
  std::string trained = run_ember("train " + idx_data() +
                                      " --model cnn --channels 4,6 --hidden 8 --epochs 3 --batch-size 4 --lr 0.1 "
                                      "--seed 3 --quiet --save " + checkpoint,
                                  &code);
  INFO(trained);
  REQUIRE(code == 0);
  // The fixture's 4x4 images: 1x4x4 in, two stages leave 6 x 1 x 1 for the head.
  CHECK_THAT(trained, Catch::Contains("model:           1x4x4-conv4-conv6-8-3 CNN, 345 parameters"));

  ember::Metadata metadata;
  ember::nn::StateDict saved = ember::load(checkpoint, &metadata);
  const std::pair<const char*, ember::Shape> expected[] = {
      {"model.0.weight", {4, 1, 3, 3}}, {"model.0.bias", {4}}, {"model.3.weight", {6, 4, 3, 3}},
      {"model.3.bias", {6}},            {"model.7.weight", {8, 6}}, {"model.7.bias", {8}},
      {"model.9.weight", {3, 8}},       {"model.9.bias", {3}}};
  std::int64_t model_tensors = 0;
  for (const auto& [name, tensor] : saved) model_tensors += std::string(name).rfind("model.", 0) == 0 ? 1 : 0;
  CHECK(model_tensors == 8);
  for (const auto& [name, shape] : expected) {
    INFO(name);
    const ember::Tensor* tensor = saved.find(name);
    REQUIRE(tensor != nullptr);
    CHECK(tensor->sizes() == shape);
  }
  nlohmann::json config = nlohmann::json::parse(metadata.at("config"));
  CHECK(config.at("model") == "cnn");
  CHECK(config.at("channels") == nlohmann::json({4, 6}));
  CHECK(config.at("input_shape") == nlohmann::json({1, 4, 4}));

  // eval rebuilds the CNN and gets the accuracy train printed.
  auto after = [](const std::string& text, const std::string& label) {
    auto at = text.find(label);
    return at == std::string::npos ? std::string() : text.substr(at + label.size(), 6);
  };
  std::string evaluated = run_ember("eval --device cpu --checkpoint " + checkpoint, &code);
  INFO(evaluated);
  REQUIRE(code == 0);
  CHECK_THAT(evaluated, Catch::Contains("(1x4x4-conv4-conv6-8-3 CNN, epoch 3"));
  CHECK(after(evaluated, "accuracy:   ") == after(trained, "test accuracy:   "));

  // predict on the IDX test images: one prediction per image, and together they score
  // eval's accuracy.
  std::string predicted =
      run_ember("predict --device cpu --checkpoint " + checkpoint + " --input " + fixtures_dir() + "/idx/t10k-images-idx3-ubyte --json",
                &code);
  INFO(predicted);
  REQUIRE(code == 0);
  nlohmann::json result = nlohmann::json::parse(predicted);
  REQUIRE(result.at("predictions").size() == 8);
  std::string labels = read_file(fixtures_dir() + "/idx/t10k-labels-idx1-ubyte").substr(8);
  int correct = 0;
  for (const auto& row : result.at("predictions")) {
    correct += row.at("predicted").get<int>() == labels[row.at("index").get<int>()];
  }
  char accuracy[16];
  std::snprintf(accuracy, sizeof accuracy, "%.2f%%", 100.0 * correct / 8);
  CHECK(after(evaluated, "accuracy:   ").rfind(accuracy, 0) == 0);
}

TEST_CASE("ember train --model cnn resumes exactly and refuses other channels", "[cli][cnn][resume]") {
  ScratchDir scratch("cnn_resume");
  const std::string common = "train " + idx_data() +
                             " --model cnn --channels 3,5 --hidden 6 --batch-size 5 --lr 0.05 --momentum 0.9 --seed 8 "
                             "--quiet";
  int code = -1;
  run_ember(common + " --epochs 4 --save " + scratch / "straight.st", &code);
  REQUIRE(code == 0);
  run_ember(common + " --epochs 2 --save " + scratch / "half.st", &code);
  REQUIRE(code == 0);
  run_ember(common + " --epochs 4 --resume " + scratch / "half.st" + " --save " + scratch / "resumed.st", &code);
  REQUIRE(code == 0);
  ember::nn::StateDict straight = ember::load(scratch / "straight.st");
  ember::nn::StateDict resumed = ember::load(scratch / "resumed.st");
  for (const auto& [name, tensor] : straight) {
    INFO(name);
    const ember::Tensor* other = resumed.find(name);
    REQUIRE(other != nullptr);
    CHECK(tensor.equal(*other));
  }

  std::string output = run_ember("train " + idx_data() +
                                     " --model cnn --channels 3,4 --hidden 6 --batch-size 5 --lr 0.05 --momentum 0.9 "
                                     "--seed 8 --quiet --epochs 4 --resume " + scratch / "half.st",
                                 &code);
  INFO(output);
  CHECK(code == 1);  // as every refused --resume (test_cli_resume.cpp)
  CHECK_THAT(output, Catch::Contains("--channels: checkpoint 3,5, now 3,4"));
  output = run_ember("train " + idx_data() + " --hidden 6 --batch-size 5 --lr 0.05 --momentum 0.9 --seed 8 --quiet "
                                             "--epochs 4 --resume " + scratch / "half.st",
                     &code);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains("--model: checkpoint cnn, now mlp"));
}

TEST_CASE("a CNN checkpoint whose config does not fit its tensors is refused before anything is built",
          "[cli][cnn][hostile]") {
  ScratchDir scratch("cnn_hostile");
  int code = -1;
  run_ember("train " + idx_data() + " --model cnn --channels 2,3 --hidden 4 --epochs 1 --quiet --save " +
                scratch / "ck.st",
            &code);
  REQUIRE(code == 0);
  struct Case {
    const char* key;
    nlohmann::json value;
    const char* message;
  };
  const Case cases[] = {
      {"channels", {2, 4}, "model.3.weight is [3, 2, 3, 3] but the config says [4, 2, 3, 3]"},
      {"channels", {4611686018427387904LL, 3}, "a channel width 4611686018427387904 is outside [1, 2147483647]"},
      {"input_shape", {1, 4, 8}, "the input shape 1x4x8 does not hold 16 features"},
      {"input_shape", {1, 4}, "the input shape has 2 sizes, expected C, H, W"},
      {"model", "transformer", "unknown model \"transformer\" (expected mlp, cnn or spec)"},
  };
  for (const Case& c : cases) {
    INFO(c.key << " = " << c.value.dump());
    ember::Metadata metadata;
    ember::nn::StateDict tensors = ember::load(scratch / "ck.st", &metadata);
    nlohmann::json config = nlohmann::json::parse(metadata.at("config"));
    config[c.key] = c.value;
    metadata["config"] = config.dump();
    ember::save(tensors, scratch / "bad.st", metadata);
    std::string output = run_ember("eval --device cpu --checkpoint " + scratch / "bad.st", &code);
    INFO(output);
    CHECK(code == 1);
    CHECK_THAT(output, Catch::Contains("the checkpoint's model config does not match its tensors"));
    CHECK_THAT(output, Catch::Contains(c.message));
  }
}
