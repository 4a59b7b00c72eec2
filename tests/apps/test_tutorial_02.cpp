// tests/apps/test_tutorial_02.cpp — tutorial §2 program vs PyTorch's transcript.
//
// tests/apps/expected/tutorial_02_tensors.txt was produced by
// tests/reference/tutorial_02_tensors.py in PyTorch; build/bin/tutorial_02_tensors must
// print the same text, character for character.
#include <catch2/catch.hpp>

#include <string>

#include "test_support.h"

using ember::testing::read_file;
using ember::testing::run_program;

TEST_CASE("tutorial_02_tensors prints what PyTorch prints", "[apps][tutorial][core]") {
  int exit_code = -1;
  std::string output = run_program("tutorial_02_tensors", "", &exit_code);
  REQUIRE(exit_code == 0);
  REQUIRE(output == read_file(std::string(EMBER_SOURCE_DIR) + "/tests/apps/expected/tutorial_02_tensors.txt"));
}
