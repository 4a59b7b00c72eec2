// tests/apps/test_tutorial_09_gpu.cpp — tutorial §9.1–9.2 / GPU appendix.
// Without a GPU the program must print exactly what tests/reference/tutorial_09_gpu.py
// prints under PyTorch on a CPU; with a GPU the training log must still be the same.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include <ember/ember.h>

#include "test_support.h"

namespace {
std::string loss_lines(const std::string& text) {
  std::istringstream in(text);
  std::string line, kept;
  while (std::getline(in, line)) {
    if (line.rfind("Epoch:", 0) == 0 || line.find("accuracy") != std::string::npos) kept += line + "\n";
  }
  return kept;
}
}  // namespace

TEST_CASE("tutorial 09: device-agnostic training prints PyTorch's log", "[apps][tutorial]") {
  int exit_code = -1;
  const std::string output = ember::testing::run_program("tutorial_09_gpu", "", &exit_code);
  const std::string expected =
      ember::testing::read_file(std::string(EMBER_SOURCE_DIR) + "/tests/apps/expected/tutorial_09_gpu.txt");
  REQUIRE(exit_code == 0);
  if (ember::cuda::is_available()) {
    CHECK(loss_lines(output) == loss_lines(expected));
  } else {
    CHECK(output == expected);
  }
}

TEST_CASE("tutorial 09: moving a tensor to a missing GPU is a clear error", "[apps][tutorial]") {
  if (ember::cuda::is_available()) return;  // nothing to check: the move succeeds
  auto tensor_1 = ember::tensor({1., 2., 3.});
  REQUIRE_THROWS_AS(tensor_1.to("cuda"), ember::DeviceError);
}
