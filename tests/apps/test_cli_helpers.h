// tests/apps/test_cli_helpers.h — small helpers shared by the `ember` CLI tests (test_cli*.cpp).
//
// The CLI tests are black-box: they run build/bin/ember through
// ember::testing::run_program and look at its output, exit code and files. These helpers
// give each test its own scratch directory, the fixture paths, a way to capture stderr
// together with stdout, larger IDX data sets made on the spot, and Ctrl-C at a chosen moment.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <map>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <ember/nn/serialize.h>

#include "test_support.h"

namespace ember::testing::cli {

// tests/apps/fixtures/cli (made by its make_fixtures.py).
inline std::string fixtures_dir() { return EMBER_SOURCE_DIR "/tests/apps/fixtures/cli"; }

// A fresh, empty directory for one test, removed when the object goes out of scope.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& name)
      : path_(std::filesystem::temp_directory_path() /
              ("ember_cli_" + name + "_" + std::to_string(static_cast<long long>(getpid())))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }
  std::string str() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

// Runs `ember ARGUMENTS` and returns stdout and stderr together.
inline std::string run_ember(const std::string& arguments, int* exit_code) {
  return run_program("ember", arguments + " 2>&1", exit_code);
}

// A copy of the IDX fixture directory that a test may damage.
inline std::string copy_idx_fixtures(const ScratchDir& scratch) {
  std::string target = scratch / "idx";
  std::filesystem::copy(fixtures_dir() + "/idx", target, std::filesystem::copy_options::recursive);
  return target;
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << bytes;
}

// An MNIST-style IDX data set in `directory` (uncompressed): train_count training and
// test_count test images of side x side pixels, labels i % classes, class c brightening
// row c as the committed fixtures do (so it is learnable), pixels from a fixed seed.
inline void write_idx_dataset(const std::string& directory, std::int64_t train_count, std::int64_t test_count,
                              int side = 4, int classes = 3) {
  std::filesystem::create_directories(directory);
  std::mt19937 random(2026);
  auto big_endian = [](std::uint32_t value) {
    return std::string{static_cast<char>(value >> 24), static_cast<char>(value >> 16), static_cast<char>(value >> 8),
                       static_cast<char>(value)};
  };
  for (auto [prefix, count] : {std::pair<const char*, std::int64_t>{"train", train_count}, {"t10k", test_count}}) {
    std::string images = std::string("\x00\x00\x08\x03", 4) + big_endian(static_cast<std::uint32_t>(count)) +
                         big_endian(side) + big_endian(side);
    std::string labels = std::string("\x00\x00\x08\x01", 4) + big_endian(static_cast<std::uint32_t>(count));
    for (std::int64_t i = 0; i < count; ++i) {
      int label = static_cast<int>(i % classes);
      for (int pixel = 0; pixel < side * side; ++pixel) {
        bool bright = pixel / side == label;
        images += static_cast<char>(bright ? 170 + random() % 86 : random() % 80);
      }
      labels += static_cast<char>(label);
    }
    write_bytes(directory + "/" + prefix + "-images-idx3-ubyte", images);
    write_bytes(directory + "/" + prefix + "-labels-idx1-ubyte", labels);
  }
}

// What `ember ARGUMENTS` printed (stdout and stderr) and its exit code, when it got the
// signal `signal_name` (INT for Ctrl-C, TERM) as soon as the /bin/sh condition `ready` held
// (checked every 20 ms; $out names the output file, e.g. `grep -q 'train loss' "$out"`). If
// ember ends before that, no signal is sent. The output is a file, so ember prints plain
// lines, not the bar.
struct InterruptedRun {
  std::string output;
  int exit_code = -1;
};
inline InterruptedRun run_ember_signalled(const ScratchDir& scratch, const std::string& arguments,
                                          const std::string& ready, const std::string& signal_name) {
  std::string out = scratch / "interrupted.out", code = scratch / "interrupted.code";
  std::string script = scratch / "interrupt.sh";
  // The output file is removed first: the readiness check must never see an earlier run's
  // output (it would interrupt the new run before ember even started).
  write_bytes(script, "out='" + out + "'\nrm -f \"$out\"\n" + std::string(EMBER_BIN_DIR) + "/ember " + arguments +
                          " >\"$out\" 2>&1 &\n"
                          "pid=$!\n"
                          "while kill -0 $pid 2>/dev/null && ! { " + ready + "; }; do sleep 0.02; done\n"
                          "kill -" + signal_name + " $pid 2>/dev/null\n"
                          "wait $pid\n"
                          "echo $? > '" + code + "'\n");
  // coreutils' timeout: a run that never gets ready or never stops fails the test, not the suite.
  int status = std::system(("timeout 300 sh '" + script + "'").c_str());
  (void)status;  // the exit code that matters is ember's, written by the script
  InterruptedRun run;
  if (std::filesystem::exists(out)) run.output = read_file(out);
  std::string exit_code = std::filesystem::exists(code) ? read_file(code) : "";
  if (!exit_code.empty()) run.exit_code = std::stoi(exit_code);
  return run;
}

// The same after a SIGINT (Ctrl-C).
inline InterruptedRun run_ember_interrupted(const ScratchDir& scratch, const std::string& arguments,
                                           const std::string& ready) {
  return run_ember_signalled(scratch, arguments, ready, "INT");
}

// The "event": "step" losses of a --log file, in order.
inline std::vector<double> logged_step_losses(const std::string& log_path) {
  std::vector<double> losses;
  std::ifstream file(log_path);
  std::string line;
  while (std::getline(file, line)) {
    auto entry = nlohmann::json::parse(line);
    if (entry.at("event") == "step") losses.push_back(entry.at("loss").get<double>());
  }
  return losses;
}

// The lines of a --log file as JSON objects.
inline std::vector<nlohmann::json> log_entries(const std::string& log_path) {
  std::vector<nlohmann::json> entries;
  std::ifstream file(log_path);
  std::string line;
  while (std::getline(file, line)) entries.push_back(nlohmann::json::parse(line));
  return entries;
}

// `ember ARGUMENTS`, which must succeed (exit 0); its stdout and stderr.
inline std::string run_ok(const std::string& arguments) {
  int code = -1;
  std::string output = run_ember(arguments, &code);
  INFO("ember " << arguments << "\n" << output);
  REQUIRE(code == 0);
  return output;
}

// A command line that must fail with `code` and a message containing `message`.
struct ExpectedFailure {
  std::string arguments, message;
  int code = 2;  // 2: a usage error; 1: the command failed
};

// Runs each `ember ARGUMENTS` and checks its exit code and message (CHECK: every case runs).
inline void check_failures(const std::vector<ExpectedFailure>& cases) {
  for (const ExpectedFailure& c : cases) {
    INFO("ember " << c.arguments);
    int code = -1;
    std::string output = run_ember(c.arguments, &code);
    INFO(output);
    CHECK(code == c.code);
    CHECK_THAT(output, Catch::Contains(c.message));
  }
}

// The model tensors of a checkpoint ("model.*"), as raw bytes by name: equal maps mean
// byte-identical parameters.
inline std::map<std::string, std::string> model_bytes(const std::string& checkpoint) {
  std::map<std::string, std::string> bytes;
  for (const auto& [name, tensor] : ember::load(checkpoint)) {
    if (std::string(name).rfind("model.", 0) != 0) continue;
    ember::Tensor t = tensor.contiguous();
    bytes[name] = std::string(static_cast<const char*>(t.data_ptr()), t.numel() * t.element_size());
  }
  return bytes;
}

}  // namespace ember::testing::cli
