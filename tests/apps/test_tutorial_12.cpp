// tests/apps/test_tutorial_12.cpp — §12, mixed precision, part 1: tutorial_12_mixed_precision
// prints, character for character, what tests/reference/tutorial_12_mixed_precision.py
// printed in PyTorch (tests/apps/expected/tutorial_12_mixed_precision.txt): 1/3 and its bits
// in three formats, rounding ties to even, a stalled bfloat16 sum, float16's range, promotion;
// and part 2, autocast and loss scaling (tutorial_12_autocast).
#include <catch2/catch.hpp>

#include <string>

#include "test_support.h"

namespace {

// The program's output equals the PyTorch script's transcript, character for character.
void require_transcript(const std::string& program) {
  int exit_code = -1;
  const std::string output = ember::testing::run_program(program, "", &exit_code);
  const std::string expected =
      ember::testing::read_file(std::string(EMBER_SOURCE_DIR) + "/tests/apps/expected/" + program + ".txt");
  REQUIRE(exit_code == 0);
  REQUIRE(output == expected);
}

}  // namespace

TEST_CASE("tutorial 12: the 16-bit formats, rounding and where precision is lost", "[apps][tutorial]") {
  require_transcript("tutorial_12_mixed_precision");
}

TEST_CASE("tutorial 12: autocast and loss scaling", "[apps][tutorial]") {
  // Part 2: tutorial_12_autocast prints what tests/reference/tutorial_12_autocast.py printed
  // (tests/apps/expected/tutorial_12_autocast.txt): the dtype autocast picks per op, the
  // float32 gradients that come back through the casts, float16's overflow, and a GradScaler
  // skipping, backing off and growing.
  require_transcript("tutorial_12_autocast");
}
