// tests/apps/test_cli_helpers.h — small helpers shared by the `ember` CLI tests (test_cli*.cpp).
//
// The CLI tests are black-box: they run build/bin/ember through
// ember::testing::run_program and look at its output, exit code and files. These helpers
// give each test its own scratch directory, the fixture paths, and a way to capture
// stderr together with stdout.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_support.h"

namespace ember::testing::cli {

// tests/apps/fixtures/cli (made by its make_fixtures.py).
inline std::string fixtures_dir() { return std::string(EMBER_SOURCE_DIR) + "/tests/apps/fixtures/cli"; }

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

}  // namespace ember::testing::cli
