// tests/apps/test_cli_profile.cpp — ember train --profile-steps / --profile-out and
// EMBER_PROFILE (apps/cli/step_profiler.h, core/profiler.h): which steps the profile covers,
// the table and the trace it writes, and the usage errors.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include "gpt_test_helpers.h"
#include "profile_table.h"
#include "test_cli_helpers.h"

using namespace ember::testing::cli;

namespace {

nlohmann::json read_json(const std::string& path) {
  std::ifstream file(path);
  return nlohmann::json::parse(std::string(std::istreambuf_iterator<char>(file), {}));
}

// The "ProfilerStep#N" blocks in a trace, and the names of its complete events.
std::set<std::string> event_names(const nlohmann::json& trace) {
  std::set<std::string> names;
  for (const nlohmann::json& event : trace.at("traceEvents")) {
    if (event.at("ph") == "X") names.insert(event.at("name").get<std::string>());
  }
  return names;
}

}  // namespace

TEST_CASE("ember train --profile-steps A-B profiles exactly those steps and writes the trace", "[cli][profile]") {
  ScratchDir scratch("profile_mlp");
  const std::string data = scratch / "idx";
  write_idx_dataset(data, 24, 6);  // batch 4: 6 steps an epoch
  const std::string trace_path = scratch / "trace.json";
  const std::string output = run_ok("train --data idx:" + data + " --hidden 5 --epochs 2 --batch-size 4 --quiet "
                                    "--device cpu --profile-steps 3-5 --profile-out " + trace_path);
  CHECK_THAT(output, Catch::Contains("profile of steps 3-5"));
  CHECK_THAT(output, Catch::Contains("Self %") && Catch::Contains("addmm") && Catch::Contains("AddmmBackward0") &&
                         Catch::Contains("Optimizer.step#SGD.step"));
  // The table counts the three optimizer steps of the range, and the two Linear layers'
  // addmm in each of their forwards.
  CHECK(ember::testing::profile_table_calls(output, "Optimizer.step#SGD.step") == "3");
  CHECK(ember::testing::profile_table_calls(output, "addmm") == "6");

  const nlohmann::json trace = read_json(trace_path);
  std::set<std::string> steps;
  for (const std::string& name : event_names(trace)) {
    if (name.rfind("ProfilerStep#", 0) == 0) steps.insert(name);
  }
  CHECK(steps == std::set<std::string>{"ProfilerStep#3", "ProfilerStep#4", "ProfilerStep#5"});
  CHECK(event_names(trace).count("DataLoader.next") == 1);  // the batches' fetches are in the profile
}

TEST_CASE("ember train --model gpt --profile-steps covers the GPT's ops", "[cli][profile][gpt]") {
  ScratchDir scratch("profile_gpt");
  const std::string trace_path = scratch / "gpt-trace.json";
  const std::string output = run_ok("train --model gpt --device cpu --data text:" + sample_text() +
                                    " --block-size 8 --n-layer 1 --n-head 2 --n-embd 8 --batch-size 4 --max-steps 3 "
                                    "--profile-steps 2 --profile-out " + trace_path);
  CHECK_THAT(output, Catch::Contains("profile of steps 2-2") && Catch::Contains("scaled_dot_product_flash_attention") &&
                         Catch::Contains("layer_norm") && Catch::Contains("Optimizer.step#Adam.step"));
  CHECK_THAT(output, Catch::Contains("MFU: ") && Catch::Contains("per token"));  // step 1 was counted
  const std::set<std::string> names = event_names(read_json(trace_path));
  CHECK(names.count("ProfilerStep#2") == 1);
  CHECK(names.count("ProfilerStep#1") == 0);
  CHECK(names.count("ProfilerStep#3") == 0);
}

TEST_CASE("ember train: a range past the end of training says nothing was profiled", "[cli][profile]") {
  ScratchDir scratch("profile_late");
  const std::string data = scratch / "idx";
  write_idx_dataset(data, 8, 4);
  const std::string output = run_ok("train --data idx:" + data + " --hidden 3 --epochs 1 --batch-size 4 --quiet "
                                    "--device cpu --profile-steps 50-60");
  CHECK_THAT(output, Catch::Contains("training ended before step 50; nothing was profiled"));
}

TEST_CASE("ember train: bad --profile-steps and --profile-out are usage errors (exit 2)", "[cli][profile][usage]") {
  ScratchDir scratch("profile_usage");
  const std::string data = scratch / "idx";
  write_idx_dataset(data, 8, 4);
  const std::string train = "train --data idx:" + data + " --hidden 3 --epochs 1 --quiet --device cpu ";
  const struct {
    std::string arguments, message;
  } cases[] = {
      {"--profile-steps 0-3", "--profile-steps 0-3: expected A-B or A, optimizer steps counted from 1"},
      {"--profile-steps 5-2", "--profile-steps 5-2: the last step comes before the first"},
      {"--profile-steps x", "--profile-steps x: expected A-B or A"},
      {"--profile-steps 2-", "--profile-steps 2-: expected A-B or A"},
      {"--profile-out " + scratch / "t.json", "--profile-out: needs --profile-steps"},
      {"--profile-steps 1 --profile-out " + data + "/train-images-idx3-ubyte", "the trace would replace it"},
      {"--profile-steps 1 --profile-out " + scratch.str(), "is a directory"},
  };
  for (const auto& c : cases) {
    int code = -1;
    const std::string output = run_ember(train + c.arguments, &code);
    INFO(c.arguments << "\n" << output);
    CHECK(code == 2);
    CHECK_THAT(output, Catch::Contains(c.message));
  }
  // The input survived the refused run.
  CHECK(std::filesystem::file_size(data + "/train-images-idx3-ubyte") == 16 + 8 * 16);
}

TEST_CASE("EMBER_PROFILE=FILE profiles a whole run: the table on stderr, the trace in FILE", "[cli][profile]") {
  ScratchDir scratch("profile_env");
  const std::string data = scratch / "idx";
  write_idx_dataset(data, 8, 4);
  const std::string trace_path = scratch / "whole.json";
  int code = -1;
  ::setenv("EMBER_PROFILE", trace_path.c_str(), 1);  // for the child only: this process read it at start
  const std::string output =
      run_ember("train --data idx:" + data + " --hidden 3 --epochs 1 --batch-size 4 --quiet --device cpu", &code);
  ::unsetenv("EMBER_PROFILE");
  INFO(output);
  REQUIRE(code == 0);
  CHECK_THAT(output, Catch::Contains("EMBER_PROFILE: trace written to " + trace_path));
  const std::set<std::string> names = event_names(read_json(trace_path));
  CHECK(names.count("AddmmBackward0") == 1);
  CHECK(names.count("Optimizer.step#SGD.step") == 1);
}

TEST_CASE("ember train's summary prints MFU from the FLOPs a training step runs per sample", "[cli][profile]") {
  ScratchDir scratch("mfu");
  const std::string data = scratch / "idx";
  write_idx_dataset(data, 12, 6);  // 4x4 images, 3 classes
  const std::string output =
      run_ok("train --data idx:" + data + " --hidden 5 --epochs 1 --batch-size 4 --quiet --device cpu");
  // Two Linear layers, 16x5 and 5x3: 2·(16·5 + 5·3) = 190 FLOP forward; backward, both
  // weight gradients (190) and the hidden layer's input gradient (2·5·3 = 30), not the
  // input's: 410 FLOP a sample.
  CHECK_THAT(output, Catch::Contains("MFU: ") && Catch::Contains("of the CPU's computed fp32 peak") &&
                         Catch::Contains("; 410 FLOP per sample"));
  // A bfloat16 run divides by the bfloat16 peak where the CPU has one (its products run
  // there), in the summary and in the profile table's header; float16 runs in float32.
  __builtin_cpu_init();
  const std::string peak = __builtin_cpu_supports("avx512bf16") ? "bf16" : "fp32";
  const std::string mixed = run_ok("train --data idx:" + data +
                                   " --hidden 5 --epochs 1 --batch-size 4 --quiet --device cpu --precision bf16"
                                   " --profile-steps 2");
  CHECK_THAT(mixed, Catch::Contains("of the CPU's computed " + peak + " peak (") &&
                        Catch::Contains("% peak: of the CPU's computed " + peak + " peak for"));
  CHECK_THAT(run_ok("train --data idx:" + data + " --hidden 5 --epochs 1 --batch-size 4 --quiet --device cpu --precision fp16"),
             Catch::Contains("of the CPU's computed fp32 peak ("));
}

TEST_CASE("EMBER_PROFILE never overwrites a file that is not an earlier trace, nor a directory", "[cli][profile]") {
  ScratchDir scratch("profile_env_hostile");
  const std::string data = scratch / "idx";
  write_idx_dataset(data, 8, 4);
  const std::string input = data + "/train-images-idx3-ubyte";
  const std::string before = ember::testing::read_file(input);
  for (const std::string& target : {input, scratch.str()}) {
    int code = -1;
    ::setenv("EMBER_PROFILE", target.c_str(), 1);
    const std::string output =
        run_ember("train --data idx:" + data + " --hidden 3 --epochs 1 --batch-size 4 --quiet --device cpu", &code);
    ::unsetenv("EMBER_PROFILE");
    INFO(output);
    CHECK(code == 0);  // the run itself succeeded; only the trace was refused
    CHECK_THAT(output, Catch::Contains("ember: EMBER_PROFILE: " + target) &&
                           Catch::Contains(target == input ? "it was not overwritten" : "is not a regular file"));
  }
  CHECK(ember::testing::read_file(input) == before);
  // An earlier trace is replaced.
  const std::string trace_path = scratch / "trace.json";
  for (int run = 0; run < 2; ++run) {
    int code = -1;
    ::setenv("EMBER_PROFILE", trace_path.c_str(), 1);
    const std::string output =
        run_ember("train --data idx:" + data + " --hidden 3 --epochs 1 --batch-size 4 --quiet --device cpu", &code);
    ::unsetenv("EMBER_PROFILE");
    CHECK(code == 0);
    CHECK_THAT(output, Catch::Contains("trace written to " + trace_path));
  }
}
