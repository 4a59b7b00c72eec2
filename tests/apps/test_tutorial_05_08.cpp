// tests/apps/test_tutorial_05_08.cpp — the tutorial programs for §5–§8 print, character
// for character, what the same steps print in PyTorch (transcripts made by
// tests/reference/tutorial_0N_*.py with Debian's torch, stored in tests/apps/expected/).
#include <catch2/catch.hpp>

#include <string>

#include "test_support.h"

namespace {

void check_transcript(const std::string& program, const std::string& transcript) {
  int exit_code = -1;
  const std::string output = ember::testing::run_program(program, "", &exit_code);
  const std::string expected = ember::testing::read_file(std::string(EMBER_SOURCE_DIR) + "/tests/apps/expected/" + transcript);
  REQUIRE(exit_code == 0);
  REQUIRE(output == expected);
}

}  // namespace

TEST_CASE("tutorial 05: the MLP's summary, seeded weights and forward pass", "[apps][tutorial]") {
  check_transcript("tutorial_05_mlp", "tutorial_05_mlp.txt");
}

TEST_CASE("tutorial 06: DataLoader batches in PyTorch's shuffled order", "[apps][tutorial]") {
  check_transcript("tutorial_06_data", "tutorial_06_data.txt");
}

TEST_CASE("tutorial 07: the training log, predictions and accuracy", "[apps][tutorial]") {
  check_transcript("tutorial_07_training", "tutorial_07_training.txt");
}

TEST_CASE("tutorial 08: a safetensors save/load round trip", "[apps][tutorial]") {
  check_transcript("tutorial_08_save_load", "tutorial_08_save_load.txt");
}
