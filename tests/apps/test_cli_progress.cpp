// tests/apps/test_cli_progress.cpp — what `ember train` shows while it trains (apps/cli/progress.h).
//
// Three styles: plain lines when stdout is a file or a pipe (these tests' usual case), one
// bar redrawn in place ("\r...\x1b[K") when stdout is a terminal, nothing with --quiet. The
// terminal is a real pseudo-terminal from util-linux's `script`, when it is installed.
#include <catch2/catch.hpp>

#include <filesystem>
#include <regex>
#include <string>

#include "test_cli_helpers.h"

using namespace ember::testing;
using namespace ember::testing::cli;

namespace {

const std::string kToy = "train --data toy --hidden 4 --epochs 2 --batch-size 2 --lr 0.3 --seed 1";

// `ember ARGUMENTS` with stdout on a pseudo-terminal; "" when `script` is missing.
std::string run_on_terminal(const std::string& arguments) {
  if (!std::filesystem::exists("/usr/bin/script")) return "";
  std::string command = std::string(EMBER_BIN_DIR) + "/ember " + arguments;
  FILE* pipe = popen(("/usr/bin/script -qec '" + command + "' /dev/null").c_str(), "r");
  if (pipe == nullptr) return "";
  std::string output;
  char buffer[4096];
  std::size_t count;
  while ((count = fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, count);
  pclose(pipe);
  return output;
}

}  // namespace

TEST_CASE("ember train --quiet prints the summary and no progress", "[cli][progress]") {
  int code = -1;
  std::string output = run_ember(kToy + " --quiet", &code);
  CHECK(code == 0);
  CHECK(output.rfind("Summary\n", 0) == 0);  // the very first line
  CHECK_THAT(output, !Catch::Contains("Epoch"));
  CHECK_THAT(output, !Catch::Contains("Training a"));
  CHECK(output.find('\r') == std::string::npos);

  // --quiet on a terminal too.
  std::string terminal = run_on_terminal(kToy + " --quiet");
  if (terminal.empty()) return;
  CHECK_THAT(terminal, Catch::Contains("Summary"));
  CHECK_THAT(terminal, !Catch::Contains("Epoch"));
}

TEST_CASE("ember train prints plain progress lines when stdout is not a terminal", "[cli][progress]") {
  int code = -1;
  std::string output = run_ember(kToy, &code);
  CHECK(code == 0);
  CHECK(output.find('\r') == std::string::npos);
  CHECK(output.find("\x1b[") == std::string::npos);
  // 5 examples in batches of 2: 3 batch lines and one epoch line per epoch.
  std::regex batch_line(R"(Epoch: 00[12]/002 \| Batch 00[0-2]/003 \| Train Loss: \d+\.\d\d \| \d+ samples/s \| ETA \d+:\d\d:\d\d\n)");
  std::regex epoch_line(R"(Epoch: 00[12]/002 \| train loss \d\.\d{4} \| train acc \d+\.\d\d% \| \d+ samples/s\n)");
  auto count = [&](const std::regex& pattern) {
    return std::distance(std::sregex_iterator(output.begin(), output.end(), pattern), std::sregex_iterator());
  };
  CHECK(count(batch_line) == 6);
  CHECK(count(epoch_line) == 2);
}

TEST_CASE("ember train draws a progress bar in place on a terminal", "[cli][progress]") {
  std::string output = run_on_terminal(kToy);
  if (output.empty()) {
    WARN("util-linux `script` is not installed: no pseudo-terminal to test the bar on");
    return;
  }
  INFO(output);
  // Each redraw returns to the line start and clears the rest of the line.
  std::regex bar(R"(\rEpoch ([12])/2 \[[=> ]{24}\] ([1-3])/3  loss \d+\.\d{4}  \d+ samples/s  ETA \d+:\d\d:\d\d \x1b\[K)");
  auto bars = std::distance(std::sregex_iterator(output.begin(), output.end(), bar), std::sregex_iterator());
  CHECK(bars >= 4);  // at least the first and the (forced) last redraw of each epoch
  CHECK_THAT(output, Catch::Contains("[========================] 3/3"));  // the full bar
  // The epoch summary replaces the bar; the plain per-batch lines are not printed.
  CHECK_THAT(output, Catch::Contains("\r\x1b[KEpoch: 001/002 | train loss "));
  CHECK_THAT(output, Catch::Contains("\r\x1b[KEpoch: 002/002 | train loss "));
  CHECK_THAT(output, !Catch::Contains("| Batch 000/003 |"));
  CHECK_THAT(output, Catch::Contains("Summary"));
}
