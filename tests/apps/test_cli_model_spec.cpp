// tests/apps/test_cli_model_spec.cpp — `ember train --model spec:FILE.json` (apps/cli/model_spec.h).
//
// A model written as a list of PyTorch layers: the presets mlp and cnn are specs, so a spec
// file that writes them out trains exactly as they do (same seed, same parameters byte for
// byte); a spec with BatchNorm2d and AvgPool2d trains, saves its running statistics, and is
// rebuilt from the checkpoint by eval and --resume; the model prints as PyTorch prints the
// same torch.nn.Sequential (tests/reference/gen_model_spec_repr.py); and every mistake in a
// spec is a usage error naming the layer and the argument.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <string>

#include <ember/nn/serialize.h>

#include "test_cli_helpers.h"

using namespace ember::testing;
using namespace ember::testing::cli;

namespace {

std::string idx_data() { return "--device cpu --data idx:" + fixtures_dir() + "/idx"; }
std::string spec(const std::string& name) { return "--model spec:" + fixtures_dir() + "/specs/" + name; }

// What `ember info --checkpoint` prints after its three header lines: the model's repr.
std::string printed_repr(const std::string& checkpoint) {
  std::string output = run_ok("info --checkpoint " + checkpoint);
  std::size_t start = output.find("Sequential(");
  REQUIRE(start != std::string::npos);
  std::string repr = output.substr(start);
  while (!repr.empty() && repr.back() == '\n') repr.pop_back();
  return repr;
}

}  // namespace

TEST_CASE("ember train --model spec: the mlp and cnn presets written as specs train byte-identically",
          "[cli][spec]") {
  ScratchDir scratch("spec_presets");
  struct Case {
    std::string preset, spec_file;
  };
  // The files write out --hidden 8,6 --dropout 0.5 and --channels 4,6 --hidden 8.
  const Case cases[] = {{"--hidden 8,6 --dropout 0.5", "mlp.json"}, {"--model cnn --channels 4,6 --hidden 8", "cnn.json"}};
  for (const Case& c : cases) {
    INFO(c.spec_file);
    const std::string common = "train " + idx_data() + " --epochs 2 --batch-size 4 --lr 0.1 --seed 5 --quiet";
    run_ok(common + " " + c.preset + " --save " + scratch / "preset.st" + " --log " + scratch / "preset.jsonl" +
           " --log-every 1");
    run_ok(common + " " + spec(c.spec_file) + " --save " + scratch / "spec.st" + " --log " + scratch / "spec.jsonl" +
           " --log-every 1");
    // The first step's loss is the initial parameters' (same forward, same batch): equal
    // losses at every step and equal final parameters mean the same initial ones too.
    const std::vector<double> preset_losses = logged_step_losses(scratch / "preset.jsonl");
    REQUIRE(preset_losses.size() == 12);
    CHECK(logged_step_losses(scratch / "spec.jsonl") == preset_losses);
    const auto preset = model_bytes(scratch / "preset.st");
    CHECK(preset.size() >= 6);
    CHECK(model_bytes(scratch / "spec.st") == preset);
    // Printed the same way, too.
    CHECK(printed_repr(scratch / "spec.st") == printed_repr(scratch / "preset.st"));
  }
}

TEST_CASE("ember train --model spec: prints the model as PyTorch's repr of the same Sequential", "[cli][spec]") {
  ScratchDir scratch("spec_repr");
  const nlohmann::json reference = load_reference("model_spec_repr.json");
  for (const char* name : {"all_layers.json", "mlp.json", "cnn.json"}) {
    INFO(name);
    const std::string checkpoint = scratch / "model.st";
    const std::string output =
        run_ok("train " + idx_data() + " " + spec(name) + " --epochs 1 --batch-size 4 --save " + checkpoint);
    const std::string expected = reference.at(name).get<std::string>();
    CHECK(printed_repr(checkpoint) == expected);
    CHECK_THAT(output, Catch::Contains(expected));  // the training header prints it as well
  }
}

TEST_CASE("ember train --model spec: BatchNorm2d and AvgPool2d train, save their statistics, and resume exactly",
          "[cli][spec]") {
  ScratchDir scratch("spec_batchnorm");
  write_bytes(scratch / "bn.json", R"([
    {"type": "Conv2d", "out_channels": 3, "kernel_size": 3, "padding": 1},
    {"type": "BatchNorm2d"},
    {"type": "ReLU"},
    {"type": "AvgPool2d", "kernel_size": 2},
    {"type": "Flatten"},
    {"type": "Linear"}])");
  const std::string common = "train " + idx_data() + " --model spec:" + scratch / "bn.json" +
                             " --batch-size 4 --lr 0.1 --seed 2 --quiet";
  const std::string one_step = run_ok(common + " --epochs 1 --save " + scratch / "one.st");
  CHECK_THAT(one_step, Catch::Contains("model:           1x4x4-Conv2d-BatchNorm2d-ReLU-AvgPool2d-Flatten-Linear-3 "
                                       "model, 75 parameters"));
  ember::nn::StateDict state = ember::load(scratch / "one.st");
  // 30 + 6 + 39 parameters: Conv2d 3x1x3x3 + 3, BatchNorm2d 3 + 3, Linear 3x12 + 3. 24 examples in
  // batches of 4: 6 steps, each updating the running statistics.
  CHECK(state.at("model.1.num_batches_tracked").item<std::int64_t>() == 6);
  CHECK(state.at("model.1.running_mean").sizes() == ember::Shape{3});
  CHECK(state.at("model.1.running_var").abs().sum().item<float>() > 0);
  CHECK(state.at("model.1.running_mean").abs().sum().item<float>() > 0);  // moved from its zeros
  CHECK(state.at("model.5.weight").sizes() == ember::Shape{3, 12});

  // 2 epochs, then a resume to 3 == 3 epochs straight (the spec is rebuilt from the checkpoint).
  run_ok(common + " --epochs 3 --save " + scratch / "straight.st");
  run_ok(common + " --epochs 2 --save " + scratch / "resumed.st");
  run_ok(common + " --epochs 3 --save " + scratch / "resumed.st" + " --resume " + scratch / "resumed.st");
  CHECK(model_bytes(scratch / "resumed.st") == model_bytes(scratch / "straight.st"));

  // The same --model text with other layers (the file edited since) is not an exact resume.
  write_bytes(scratch / "bn.json", R"([
    {"type": "Conv2d", "out_channels": 3, "kernel_size": 3, "padding": 1},
    {"type": "BatchNorm2d", "momentum": 0.5},
    {"type": "ReLU"},
    {"type": "AvgPool2d", "kernel_size": 2},
    {"type": "Flatten"},
    {"type": "Linear"}])");
  int code = -1;
  std::string refused =
      run_ember(common + " --epochs 4 --save " + scratch / "resumed.st" + " --resume " + scratch / "resumed.st", &code);
  CHECK(code == 1);
  CHECK_THAT(refused, Catch::Contains("the layers of --model spec:" + scratch / "bn.json" +
                                      " differ from the checkpoint's"));

  // eval rebuilds it from the checkpoint alone (the spec file may be gone).
  std::filesystem::remove(scratch / "bn.json");
  CHECK_THAT(run_ok("eval --device cpu --checkpoint " + scratch / "straight.st"), Catch::Contains("accuracy:"));
  // predict too (the model in eval mode: BatchNorm normalises with its running statistics).
  const nlohmann::json predicted = nlohmann::json::parse(run_ok(
      "predict --device cpu --json --checkpoint " + scratch / "straight.st" + " --input " + fixtures_dir() +
      "/idx/t10k-images-idx3-ubyte"));
  REQUIRE(predicted.at("predictions").size() == 8);
  double total = 0;
  for (const auto& p : predicted.at("predictions")[0].at("probabilities")) total += p.get<double>();
  CHECK(std::abs(total - 1.0) < 1e-5);
}

TEST_CASE("ember train --model spec: mistakes are usage errors naming the layer and the argument (exit 2)",
          "[cli][spec][usage]") {
  ScratchDir scratch("spec_errors");
  struct Case {
    std::string spec_text, message;
  };
  const Case cases[] = {
      {R"([{"type": "Conv3d", "out_channels": 2}])", "layer 0: unknown type \"Conv3d\" (known: Linear, Conv2d,"},
      {R"([{"type": "Flatten"}, {"kind": "Linear"}])", "layer 1: needs \"type\", a PyTorch module name"},
      {R"([{"type": "Conv2d", "out_channels": 2, "kernal_size": 3}, {"type": "Flatten"}, {"type": "Linear"}])",
       "layer 0 (Conv2d): needs \"kernel_size\""},
      {R"([{"type": "Conv2d", "out_channels": 2, "kernel_size": 3, "kernal_size": 3}, {"type": "Flatten"},
           {"type": "Linear"}])",
       "layer 0 (Conv2d): unknown argument \"kernal_size\" (Conv2d takes in_channels, out_channels, kernel_size, "
       "stride, padding, dilation, groups, bias)"},
      {R"([{"type": "Conv2d", "out_channels": 2, "kernel_size": "3"}])",
       "layer 0 (Conv2d): \"kernel_size\" must be an integer in [1, 2147483647] or a list of two, got \"3\""},
      {R"([{"type": "Conv2d", "in_channels": 3, "out_channels": 2, "kernel_size": 3}])",
       "layer 0 (Conv2d): \"in_channels\" is 3 but the layer before gives 1 channels (shape [1, 4, 4] per example)"},
      {R"([{"type": "Conv2d", "out_channels": 2, "kernel_size": 5}])",
       "layer 0 (Conv2d): its kernel (5, dilation 1, padding 0) does not fit the input size 4"},
      {R"([{"type": "Flatten"}, {"type": "Linear", "in_features": 100, "out_features": 4}, {"type": "Linear"}])",
       "layer 1 (Linear): \"in_features\" is 100 but the layer before gives 16 features (shape [16] per example)"},
      {R"([{"type": "Flatten"}, {"type": "Linear"}, {"type": "ReLU"}, {"type": "Linear"}])",
       "layer 1 (Linear): needs \"out_features\""},
      {R"([{"type": "Conv2d", "out_channels": 2, "kernel_size": 3, "padding": 1}, {"type": "Linear"}])",
       "the model gives shape [2, 4, 3] per example, but cross_entropy needs one score per class: [3]"},
      {R"([{"type": "Flatten"}, {"type": "BatchNorm2d"}, {"type": "Linear"}])",
       "layer 1 (BatchNorm2d): needs images C x H x W, but the layer before gives shape [16] per example"},
      {R"([{"type": "Flatten"}, {"type": "LayerNorm", "normalized_shape": [4, 4]}, {"type": "Linear"}])",
       "layer 1 (LayerNorm): \"normalized_shape\" is [4, 4] but the layer before gives shape [16] per example, "
       "which does not end in it"},
      {R"([{"type": "Flatten"}, {"type": "LayerNorm", "normalized_shape": []}, {"type": "Linear"}])",
       "layer 1 (LayerNorm): \"normalized_shape\" must be an integer in [1, 2147483647] or a non-empty list of "
       "them, got []"},
      {R"([{"type": "Flatten"}, {"type": "Dropout", "p": 1.5}, {"type": "Linear"}])",
       "layer 1 (Dropout): \"p\" must be a number in [0, 1], got 1.5"},
      {R"([{"type": "Flatten", "start_dim": 0}, {"type": "Linear"}])",
       "layer 0 (Flatten): start_dim must not flatten dim 0, the batch"},
      {R"([{"type": "MaxPool2d", "kernel_size": 2, "padding": 2}, {"type": "Flatten"}, {"type": "Linear"}])",
       "layer 0 (MaxPool2d): padding 2 is more than half of the kernel size 2"},
      {R"([{"type": "GELU", "approximate": "fast"}, {"type": "Flatten"}, {"type": "Linear"}])",
       "layer 0 (GELU): \"approximate\" must be one of \"none\", \"tanh\", got \"fast\""},
      {R"({"type": "Linear"})", "expected a non-empty JSON list of layers"},
      {R"([])", "expected a non-empty JSON list of layers"},
      {R"([{"type": "Linear"},)", "not valid JSON"},
  };
  for (const Case& c : cases) {
    INFO(c.spec_text);
    write_bytes(scratch / "bad.json", c.spec_text);
    int code = -1;
    std::string output = run_ember("train " + idx_data() + " --epochs 1 --model spec:" + scratch / "bad.json", &code);
    INFO(output);
    CHECK(code == 2);
    CHECK_THAT(output, Catch::Contains("--model spec:" + scratch / "bad.json" + ": " + c.message));
  }

  // The command line around a spec.
  struct FlagCase {
    std::string arguments, message;
  };
  const FlagCase flag_cases[] = {
      {"train " + idx_data() + " " + spec("mlp.json") + " --hidden 4", "--hidden: --model spec:FILE takes its layers from the file"},
      {"train " + idx_data() + " " + spec("cnn.json") + " --channels 4", "--channels: --model spec:FILE takes its layers"},
      {"train " + idx_data() + " --model spec:", "--model: expected mlp, cnn, gpt or spec:FILE.json, got 'spec:'"},
      {"train " + idx_data() + " --model spec:" + scratch / "missing.json" + " --epochs 1",
       "--model spec:" + scratch / "missing.json" + ": cannot read"},
      {"train --device cpu --data csv:" + fixtures_dir() + "/tiny.csv " + spec("cnn.json") + " --epochs 1",
       "its first layer takes images: on csv:" + fixtures_dir() + "/tiny.csv give --input-shape C,H,W"},
  };
  for (const FlagCase& c : flag_cases) {
    INFO(c.arguments);
    int code = -1;
    std::string output = run_ember(c.arguments, &code);
    INFO(output);
    CHECK(code == 2);
    CHECK_THAT(output, Catch::Contains(c.message));
  }
  int code = -1;
  std::string output = run_ember("train --device cpu --data csv:" + fixtures_dir() + "/tiny.csv " + spec("cnn.json") +
                                     " --input-shape 2147483647,2147483647,2147483647 --epochs 1",
                                 &code);
  CHECK(code == 2);
  CHECK_THAT(output, Catch::Contains("the input shape 2147483647x2147483647x2147483647 does not hold 16 features"));
  // --input-shape makes CSV rows images for a spec, as for --model cnn.
  run_ok("train --device cpu --data csv:" + fixtures_dir() + "/tiny.csv " + spec("cnn.json") +
         " --input-shape 1,4,4 --epochs 1 --quiet");
}

TEST_CASE("a spec checkpoint whose layers do not fit its tensors is refused before anything is built",
          "[cli][spec][hostile]") {
  ScratchDir scratch("spec_hostile");
  run_ok("train " + idx_data() + " " + spec("all_layers.json") + " --epochs 1 --batch-size 4 --quiet --save " +
         scratch / "ck.st");
  struct Case {
    std::string layer_json;  // replaces layer 8, Linear(6, 8)
    std::string message;
  };
  const Case cases[] = {
      {R"({"type": "Linear", "in_features": 6, "out_features": 9, "bias": true})",
       "layer 9 (BatchNorm1d): \"num_features\" is 8 but the layer before gives 9 features"},
      {R"({"type": "Linear", "in_features": 6, "out_features": 8, "bias": false})",
       "unexpected tensor model.8.bias [8]"},
      {R"({"type": "Linear", "in_features": 6, "out_features": 4611686018427387904, "bias": true})",
       "\"out_features\" must be an integer in [1, 2147483647]"},
      {R"({"type": "Linear", "in_features": 6})", "the spec: layer 8 (Linear): needs \"out_features\""},
      // Every argument must be written out (here "bias"): what was saved is what is built.
      {R"({"type": "Linear", "in_features": 6, "out_features": 8})", "the spec is not resolved"},
      {R"({"type": "LSTM"})", "unknown type \"LSTM\""},
  };
  for (const Case& c : cases) {
    INFO(c.layer_json);
    ember::Metadata metadata;
    ember::nn::StateDict tensors = ember::load(scratch / "ck.st", &metadata);
    nlohmann::json config = nlohmann::json::parse(metadata.at("config"));
    REQUIRE(config.at("model") == "spec");
    config["spec"][8] = nlohmann::json::parse(c.layer_json);
    metadata["config"] = config.dump();
    ember::save(tensors, scratch / "bad.st", metadata);
    int code = -1;
    std::string output = run_ember("eval --device cpu --checkpoint " + scratch / "bad.st", &code);
    INFO(output);
    CHECK(code == 1);
    CHECK_THAT(output, Catch::Contains("the checkpoint's model config does not match its tensors"));
    CHECK_THAT(output, Catch::Contains(c.message));
  }
}
