// tests/apps/test_tutorial_03_04.cpp — tutorial §3–§4 programs vs PyTorch's transcripts.
//
// tests/apps/expected/tutorial_03_graph.txt and tutorial_04_autograd.txt were produced by
// tests/reference/tutorial_03_graph.py / tutorial_04_autograd.py in PyTorch; the ember
// programs must print the same text.
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include "test_support.h"

using ember::testing::read_file;
using ember::testing::run_program;

TEST_CASE("tutorial_03_graph prints what PyTorch prints", "[apps][tutorial][autograd]") {
  int exit_code = -1;
  std::string output = run_program("tutorial_03_graph", "", &exit_code);
  REQUIRE(exit_code == 0);
  REQUIRE(output == read_file(std::string(EMBER_SOURCE_DIR) + "/tests/apps/expected/tutorial_03_graph.txt"));
}

TEST_CASE("tutorial_04_autograd prints what PyTorch prints", "[apps][tutorial][autograd]") {
  int exit_code = -1;
  std::string output = run_program("tutorial_04_autograd", "", &exit_code);
  REQUIRE(exit_code == 0);
  REQUIRE(output == read_file(std::string(EMBER_SOURCE_DIR) + "/tests/apps/expected/tutorial_04_autograd.txt"));
}

TEST_CASE("tutorial_04_autograd writes the DOT graph of the computation", "[apps][tutorial][autograd]") {
  std::string path = std::string(EMBER_BIN_DIR) + "/tutorial_04_graph_test.dot";
  int exit_code = -1;
  run_program("tutorial_04_autograd", path, &exit_code);
  REQUIRE(exit_code == 0);
  std::string dot = read_file(path);
  std::remove(path.c_str());
  REQUIRE(dot.rfind("digraph autograd {", 0) == 0);
  for (const char* expected : {"BinaryCrossEntropyBackward0", "SigmoidBackward0", "AddBackward0", "MulBackward0",
                               "w1 [1] float32", "b [1] float32", "loss [] float32", "shape=note"}) {
    INFO(expected);
    REQUIRE(dot.find(expected) != std::string::npos);
  }
}
