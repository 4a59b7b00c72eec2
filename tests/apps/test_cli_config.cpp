// tests/apps/test_cli_config.cpp — `ember train --config FILE.json`, `--print-config` and
// `ember info --checkpoint C --print-config` (apps/cli/config_file.h).
//
// The config's keys are the flags without their dashes, read from CLI11's own option list:
// these tests check the round trip (what --print-config prints, --config reads back to the
// same effective options and the same run), that the command line wins over the file, and
// that an unknown key or a value of the wrong type is a usage error (exit 2) naming it.
#include <catch2/catch.hpp>

#include <string>

#include <ember/nn/serialize.h>

#include "test_cli_helpers.h"

using namespace ember::testing;
using namespace ember::testing::cli;

namespace {

std::string idx_data() { return "--device cpu --data idx:" + fixtures_dir() + "/idx"; }

}  // namespace

TEST_CASE("ember train --print-config: every flag, the effective values, in --config's schema", "[cli][config]") {
  const std::string printed = run_ok("train --data toy --hidden 30,20 --epochs 6 --lr 0.5 --seed -1 --drop-last "
                                     "--print-config");
  const nlohmann::json config = nlohmann::json::parse(printed);
  CHECK(config.at("data") == "toy");
  CHECK(config.at("hidden") == nlohmann::json({30, 20}));
  CHECK(config.at("epochs") == 6);
  CHECK(config.at("lr") == 0.5);
  CHECK(config.at("batch-size") == 32);                      // a default
  CHECK(config.at("seed") == 18446744073709551615ull);       // -1 as the run uses it (modulo 2^64)
  CHECK(config.at("drop-last") == true);                     // a switch given
  CHECK(config.at("nesterov") == false);                     // a switch not given
  CHECK(config.at("input-scale").is_null());                 // "the data's own": not given
  CHECK(config.at("resume").is_null());
  CHECK(config.at("quiet") == false);                        // -q,--quiet: its long name
  CHECK_FALSE(config.contains("config"));
  CHECK_FALSE(config.contains("print-config"));
  CHECK_FALSE(config.contains("help"));
  // Hyphens, as the flags: no key has an underscore.
  for (const auto& [key, value] : config.items()) CHECK(key.find('_') == std::string::npos);
}

TEST_CASE("ember train --config: --print-config's output reads back to the same options and the same run",
          "[cli][config]") {
  ScratchDir scratch("config_roundtrip");
  const std::string flags = "train " + idx_data() +
                            " --hidden 8 --epochs 2 --batch-size 4 --lr 0.05 --momentum 0.9 --nesterov --seed 7 "
                            "--val-split 0.25 --quiet";
  const std::string variants[] = {
      flags,
      "train " + idx_data() + " --model cnn --channels 3 --epochs 2 --lr 0.05 --momentum 0.9",
      "train " + idx_data() + " --optimizer adam --model cnn --hidden 256,128 --weight-decay 0.01",
      "train --data csv:" + fixtures_dir() + "/tiny.csv --label-column 2 --no-header --input-scale 0.5 "
      "--num-classes 4 --log-every 3 --timeout 9.5 --no-stop-on-nan",
  };
  for (const std::string& arguments : variants) {
    INFO(arguments);
    const std::string printed = run_ok(arguments + " --print-config");
    write_bytes(scratch / "run.json", printed);
    CHECK(run_ok("train --config " + scratch / "run.json" + " --print-config") == printed);
  }

  // Trained from the file, the run is the flags' run, parameter for parameter.
  const std::string printed = run_ok(flags + " --print-config");
  write_bytes(scratch / "run.json", printed);
  run_ok(flags + " --save " + scratch / "flags.st");
  run_ok("train --config " + scratch / "run.json" + " --save " + scratch / "file.st");
  CHECK(model_bytes(scratch / "flags.st") == model_bytes(scratch / "file.st"));
}

TEST_CASE("ember train --config: flags on the command line override the file", "[cli][config]") {
  ScratchDir scratch("config_override");
  write_bytes(scratch / "c.json", R"({"data": "toy", "epochs": 3, "lr": 0.25, "hidden": [5], "drop-last": true,
                                      "input-scale": null, "nesterov": false})");
  const nlohmann::json config =
      nlohmann::json::parse(run_ok("train --config " + scratch / "c.json" + " --epochs 4 --hidden 7,6 --print-config"));
  CHECK(config.at("epochs") == 4);                        // the command line
  CHECK(config.at("hidden") == nlohmann::json({7, 6}));   // the command line
  CHECK(config.at("lr") == 0.25);                         // the file
  CHECK(config.at("drop-last") == true);                  // the file
  CHECK(config.at("nesterov") == false);                  // false: as if not given
  CHECK(config.at("input-scale").is_null());              // null: not given
  CHECK(config.at("batch-size") == 32);                   // neither: the default
  // The order does not matter: --config last, the flags still win.
  const nlohmann::json later =
      nlohmann::json::parse(run_ok("train --epochs 4 --print-config --config " + scratch / "c.json"));
  CHECK(later.at("epochs") == 4);
  CHECK(later.at("lr") == 0.25);
}

TEST_CASE("ember train --config: unknown keys and wrong types are usage errors naming the key (exit 2)",
          "[cli][config][usage]") {
  ScratchDir scratch("config_errors");
  struct Case {
    std::string file_text, message;
  };
  const Case cases[] = {
      {R"({"batch_size": 4})",
       "unknown key \"batch_size\" (keys are ember train's flags without the dashes; did you mean \"batch-size\"?)"},
      {R"({"epochs": 2, "frobnicate": 1})", "unknown key \"frobnicate\""},
      {R"({"--epochs": 2})", "unknown key \"--epochs\""},
      {R"({"q": true})", "unknown key \"q\""},  // only long names
      {R"({"config": "other.json"})", "\"config\" cannot be set in a config file (only on the command line)"},
      {R"({"print-config": true})", "\"print-config\" cannot be set in a config file"},
      {R"({"help": true})", "\"help\" cannot be set in a config file"},
      {R"({"epochs": "ten"})", "--epochs expects an integer, got \"ten\""},
      {R"({"epochs": 2.5})", "--epochs expects an integer, got 2.5"},
      {R"({"lr": "0.1"})", "--lr expects a number, got \"0.1\""},
      {R"({"optimizer": 3})", "--optimizer expects a string, got 3"},
      {R"({"hidden": 256})", "--hidden expects a list of integers, got 256"},
      {R"({"hidden": [256, "x"]})", "--hidden expects a list of integers, got [256,\"x\"]"},
      {R"({"nesterov": 1})", "--nesterov expects true or false (it is a switch), got 1"},
      {R"([1, 2])", "expected a JSON object of options"},
      {R"({"epochs": )", "not valid JSON"},
      // A value of the right type that the flag refuses: the flag's own message.
      {R"({"epochs": 0})", "--epochs: must be at least 1, got 0"},
      {R"({"optimizer": "lbfgs"})", "--optimizer: lbfgs not in {sgd,adam,adamw}"},
      {R"({"optimizer": "adam", "momentum": 0.9})", "--momentum: only --optimizer sgd takes a momentum"},
  };
  for (const Case& c : cases) {
    INFO(c.file_text);
    write_bytes(scratch / "bad.json", c.file_text);
    int code = -1;
    std::string output = run_ember("train --data toy --config " + scratch / "bad.json", &code);
    INFO(output);
    CHECK(code == 2);
    CHECK_THAT(output, Catch::Contains(c.message));
  }
  int code = -1;
  std::string output = run_ember("train --data toy --config " + scratch / "missing.json", &code);
  CHECK(code == 2);
  CHECK_THAT(output, Catch::Contains("missing.json"));
}

TEST_CASE("ember info --checkpoint C --print-config: the run's options, which --config accepts and reproduces",
          "[cli][config][info]") {
  ScratchDir scratch("config_checkpoint");
  const std::string checkpoint = scratch / "run.st";
  const std::string flags = "train " + idx_data() + " --hidden 8 --dropout 0.25 --epochs 2 --batch-size 4 --seed 3 "
                            "--lr 0.05 --quiet --save " + checkpoint;
  const std::string printed = run_ok(flags + " --print-config");
  run_ok(flags);
  const std::string stored = run_ok("info --checkpoint " + checkpoint + " --print-config");
  CHECK(stored == printed);

  // Trained again from the stored config (to another file): the same parameters.
  write_bytes(scratch / "run.json", stored);
  run_ok("train --config " + scratch / "run.json" + " --save " + scratch / "again.st");
  CHECK(model_bytes(checkpoint) == model_bytes(scratch / "again.st"));

  // A checkpoint from before train_config existed: nothing to print, said so (exit 1).
  ember::Metadata metadata;
  ember::nn::StateDict tensors = ember::load(checkpoint, &metadata);
  metadata.erase("train_config");
  ember::save(tensors, scratch / "old.st", metadata);
  int code = -1;
  std::string output = run_ember("info --checkpoint " + scratch / "old.st" + " --print-config", &code);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains("old.st: the checkpoint has no \"train_config\""));
  // Without --print-config: the model as PyTorch prints it.
  CHECK_THAT(run_ok("info --checkpoint " + scratch / "old.st"),
             Catch::Contains("Sequential(\n  (0): Linear(in_features=16, out_features=8, bias=True)\n  (1): ReLU()\n"
                             "  (2): Dropout(p=0.25, inplace=False)\n"));

  output = run_ember("info --print-config", &code);
  CHECK(code == 2);
  CHECK_THAT(output, Catch::Contains("--print-config: needs --checkpoint"));
}
