// tests/apps/test_tensorboard.cpp — `ember train --tensorboard`: CRC32C and TFRecord framing on
// known vectors, and the event files read back by TensorBoard's own Python reader
// (tests/apps/tensorboard_reader.py) holding the values of the run's --log.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <regex>

#include <nlohmann/json.hpp>

#include "tensorboard_record.h"
#include "tensorboard_writer.h"
#include "test_cli_helpers.h"

using namespace ember::cli;
using ember::testing::cli::run_ember;
using ember::testing::cli::ScratchDir;
using Catch::Matchers::Contains;

namespace {

#define REQUIRE_TENSORBOARD_BUILD()                                                      \
  EMBER_REQUIRE_IN_CI(tensorboard_available(), "ember was built without libprotobuf and Boost (install " \
                                               "libprotobuf-dev protobuf-compiler libboost-dev)")

// The standard output of a shell command, and its exit code.
std::string command_output(const std::string& command, int* exit_code) {
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string output;
  char buffer[4096];
  for (std::size_t count; (count = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) output.append(buffer, count);
  const int status = pclose(pipe);
  *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return output;
}

// Declares `python`, a python3 that can import tensorboard; skips the test (fails it in CI)
// when there is none.
#define REQUIRE_TENSORBOARD_READER(python)                                                          \
  const std::optional<std::string> python =                                                         \
      ember::testing::find_python("tensorboard.backend.event_processing.event_accumulator");        \
  EMBER_REQUIRE_IN_CI(python.has_value(), "no python3 can import tensorboard (pip install tensorboard; " \
                                          ".ci/run installs it)")

// The event files in `events` as TensorBoard's own reader sees them (tensorboard_reader.py:
// {"files": [...], "first_event": {...}, "scalars": {tag: [[step, value], ...]}}).
nlohmann::json read_with_tensorboard(const std::string& python, const std::string& events) {
  const std::string reader = std::string(EMBER_SOURCE_DIR) + "/tests/apps/tensorboard_reader.py";
  int code = -1;
  const std::string output = command_output("'" + python + "' " + reader + " " + events + " 2>/dev/null", &code);
  INFO(output);
  REQUIRE(code == 0);
  return nlohmann::json::parse(output);
}

std::string little_endian(std::uint64_t value, int count) {
  std::string bytes;
  for (int i = 0; i < count; ++i) bytes.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
  return bytes;
}

}  // namespace

TEST_CASE("tensorboard: CRC32C and its TFRecord mask match the known values", "[apps][tensorboard]") {
  REQUIRE_TENSORBOARD_BUILD();
  CHECK(crc32c("123456789") == 0xE3069283u);  // the Castagnoli check value
  CHECK(crc32c("") == 0u);
  // Masks computed by TensorBoard's own reader (tensorboard.compat.tensorflow_stub.
  // pywrap_tensorflow.masked_crc32c), which refuses a record whose checksums differ.
  CHECK(masked_crc32c("123456789") == 0xC78AB0E5u);
  CHECK(masked_crc32c("") == 0xA282EAD8u);
  CHECK(masked_crc32c(little_endian(3, 8)) == 0x0E4999B0u);
}

TEST_CASE("tensorboard: a record is length, its CRC, the data, the data's CRC", "[apps][tensorboard]") {
  REQUIRE_TENSORBOARD_BUILD();
  const std::string record = tfrecord_frame("abc");
  REQUIRE(record.size() == 8 + 4 + 3 + 4);
  CHECK(record.substr(0, 8) == little_endian(3, 8));
  CHECK(record.substr(8, 4) == little_endian(0x0E4999B0u, 4));
  CHECK(record.substr(12, 3) == "abc");
  CHECK(record.substr(15, 4) == little_endian(masked_crc32c("abc"), 4));
  CHECK(tfrecord_frame("").size() == 16);
  CHECK(tensorboard_file_name(1796390796, "vm") == "events.out.tfevents.1796390796.vm");
}

TEST_CASE("tensorboard: TensorBoard's reader finds the --log values as scalars", "[apps][tensorboard][interop]") {
  REQUIRE_TENSORBOARD_BUILD();
  REQUIRE_TENSORBOARD_READER(python);
  ScratchDir scratch("tensorboard");
  int code = -1;
  const std::string log_path = scratch / "run.jsonl";
  const std::string events = scratch / "tb";
  std::string output = run_ember("train --data toy --epochs 3 --val-split 0.25 --batch-size 2 --log-every 1 --log " +
                                     log_path + " --tensorboard " + events + " -q",
                                 &code);
  INFO(output);
  REQUIRE(code == 0);

  const nlohmann::json read = read_with_tensorboard(*python, events);
  REQUIRE(read["files"].size() == 1);
  CHECK(std::regex_match(read["files"][0].get<std::string>(), std::regex(R"(events\.out\.tfevents\.\d+\..+)")));
  CHECK(read["first_event"]["file_version"] == "brain.Event:2");
  CHECK(read["first_event"]["wall_time"].get<double>() > 1.7e9);

  // Every number of the log is there, at its step, as float32.
  const nlohmann::json& scalars = read["scalars"];
  std::size_t steps = 0, epochs = 0;
  std::ifstream log(log_path);
  for (std::string line; std::getline(log, line);) {
    const nlohmann::json entry = nlohmann::json::parse(line);
    auto check_scalar = [&](const std::string& tag, const nlohmann::json& value, std::int64_t step) {
      INFO(tag << " at step " << step);
      REQUIRE(scalars.contains(tag));
      bool found = false;
      for (const auto& item : scalars[tag]) {
        if (item[0] == step) {
          found = true;
          CHECK(item[1].get<double>() == static_cast<double>(static_cast<float>(value.get<double>())));
        }
      }
      CHECK(found);
    };
    if (entry["event"] == "step") {
      ++steps;
      check_scalar("loss/train_step", entry["loss"], entry["step"]);
    } else if (entry["event"] == "epoch") {
      ++epochs;
      for (const auto& [key, tag] : std::map<std::string, std::string>{{"train_loss", "loss/train"},
                                                                       {"train_acc", "accuracy/train"},
                                                                       {"val_acc", "accuracy/val"},
                                                                       {"samples_per_s", "samples_per_s"},
                                                                       {"epoch", "epoch"}}) {
        check_scalar(tag, entry[key], entry["step"]);
      }
    } else if (entry["event"] == "summary") {
      check_scalar("final/train_acc", entry["train_acc"], scalars["epoch"].back()[0]);
    }
  }
  CHECK(epochs == 3);
  CHECK(scalars["loss/train_step"].size() == steps);
  CHECK(scalars["accuracy/val"].size() == 3);
  CHECK_FALSE(scalars.contains("summary/device"));  // strings are not scalars
}

TEST_CASE("tensorboard: --tensorboard on a file is a usage error", "[apps][tensorboard]") {
  ScratchDir scratch("tensorboard_bad");
  std::ofstream(scratch / "file") << "x";
  int code = -1;
  const std::string output = run_ember("train --data toy --epochs 1 --tensorboard " + (scratch / "file") + " -q", &code);
  if (!tensorboard_available()) {
    CHECK(code == 1);
    CHECK_THAT(output, Contains("ember was built without libprotobuf"));
    return;
  }
  CHECK(code == 2);
  CHECK_THAT(output, Contains("--tensorboard " + (scratch / "file") + ": exists and is not a directory"));
}

TEST_CASE("tensorboard: a GPT's log reaches TensorBoard: step losses, evaluations, tokens/s", "[apps][tensorboard][interop][gpt]") {
  REQUIRE_TENSORBOARD_BUILD();
  REQUIRE_TENSORBOARD_READER(python);
  ScratchDir scratch("tensorboard_gpt");
  int code = -1;
  const std::string log_path = scratch / "gpt.jsonl", events = scratch / "tb";
  std::string output = run_ember("train --model gpt --device cpu --data text:" + std::string(EMBER_SOURCE_DIR) +
                                     "/tests/apps/fixtures/words-sample.txt --block-size 8 --n-layer 1 --n-head 2 "
                                     "--n-embd 8 --batch-size 4 --max-steps 4 --eval-every 2 --eval-batches 1 "
                                     "--log-every 1 --log " + log_path + " --tensorboard " + events + " -q",
                                 &code);
  INFO(output);
  REQUIRE(code == 0);
  const nlohmann::json scalars = read_with_tensorboard(*python, events)["scalars"];
  auto value_at = [&](const std::string& tag, std::int64_t step) -> std::optional<double> {
    if (!scalars.contains(tag)) return std::nullopt;
    for (const auto& item : scalars[tag])
      if (item[0] == step) return item[1].get<double>();
    return std::nullopt;
  };
  std::size_t steps = 0, evals = 0;
  std::ifstream log(log_path);
  for (std::string line; std::getline(log, line);) {
    const nlohmann::json entry = nlohmann::json::parse(line);
    const auto as_float = [](const nlohmann::json& v) { return static_cast<double>(static_cast<float>(v.get<double>())); };
    if (entry["event"] == "step") {
      ++steps;
      CHECK(value_at("loss/train_step", entry["step"]) == as_float(entry["loss"]));
      CHECK(value_at("tokens_per_s", entry["step"]).has_value());
    } else if (entry["event"] == "eval") {
      ++evals;
      CHECK(value_at("loss/train", entry["step"]) == as_float(entry["train_loss"]));
      CHECK(value_at("loss/val", entry["step"]) == as_float(entry["val_loss"]));
    } else if (entry["event"] == "summary") {
      CHECK(value_at("final/val_loss", 4) == as_float(entry["val_loss"]));
    }
  }
  CHECK(steps == 4);
  CHECK(evals == 2);
}
