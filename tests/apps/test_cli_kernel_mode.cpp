// tests/apps/test_cli_kernel_mode.cpp — EMBER_KERNELS (core/kernel_mode.h) as the `ember` CLI
// sees it: `ember info` names the kernels in use, a bad value is a usage error (exit code 2)
// before anything runs, and `ember train` under the reference kernels trains to the losses
// the fast kernels give. (The tutorial programs and the PyTorch parity tests run again
// under EMBER_KERNELS=reference: tests/reference_mode.cmake.)
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "launch_test_helpers.h"
#include "test_cli_helpers.h"

using namespace ember::testing;
using namespace ember::testing::cli;
using namespace ember::testing::launch;

TEST_CASE("ember info names the kernels EMBER_KERNELS selects", "[cli][kernel_mode]") {
  int code = -1;
  std::string output = run_shell("env -u EMBER_KERNELS " + bin("ember") + " info", &code);
  CHECK(code == 0);
  CHECK_THAT(output, Catch::Contains("kernels:             fast (EMBER_KERNELS=reference runs the reference loops)"));
  output = run_shell("env EMBER_KERNELS=reference " + bin("ember") + " info", &code);
  CHECK(code == 0);
  CHECK_THAT(output, Catch::Contains("kernels:             reference (set by EMBER_KERNELS)"));
  output = run_shell("env EMBER_KERNELS=fast " + bin("ember") + " info", &code);
  CHECK(code == 0);
  CHECK_THAT(output, Catch::Contains("kernels:             fast"));
}

TEST_CASE("ember: a bad EMBER_KERNELS is a usage error before anything runs", "[cli][kernel_mode][usage]") {
  for (const char* command : {"info", "train --data toy --epochs 1"}) {
    INFO(command);
    int code = -1;
    std::string output = run_shell("env EMBER_KERNELS=simd " + bin("ember") + " " + command, &code);
    CHECK(code == 2);
    CHECK(output ==
          "ember: error: EMBER_KERNELS must be 'fast' or 'reference' (or unset, meaning 'fast'), got 'simd'\n");
  }
}

TEST_CASE("ember train with the reference kernels logs the fast kernels' losses", "[cli][kernel_mode]") {
  ScratchDir scratch("kernel_mode");
  std::vector<double> losses[2];
  const char* modes[] = {"fast", "reference"};
  for (int m = 0; m < 2; ++m) {
    int code = -1;
    const std::string log = scratch / (std::string(modes[m]) + ".jsonl");
    std::string output = run_shell(std::string("env EMBER_KERNELS=") + modes[m] + " " + bin("ember") +
                                       " train --data toy --hidden 30,20 --epochs 3 --batch-size 2 --lr 0.5 --seed 123"
                                       " --momentum 0.9 --quiet --log-every 1 --log " + log,
                                   &code);
    INFO(output);
    REQUIRE(code == 0);
    losses[m] = logged_step_losses(log);
  }
  REQUIRE(losses[0].size() == losses[1].size());
  REQUIRE(!losses[0].empty());
  for (std::size_t i = 0; i < losses[0].size(); ++i) {
    INFO("step " << i);
    CHECK(losses[1][i] == Approx(losses[0][i]).epsilon(1e-5).margin(1e-6));
  }
}
