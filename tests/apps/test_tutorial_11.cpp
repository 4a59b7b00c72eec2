// tests/apps/test_tutorial_11.cpp — §11, the chapter beyond the tutorial: tutorial_11_gpt
// prints, character for character, what tests/reference/tutorial_11_gpt.py printed in
// PyTorch (tests/apps/expected/tutorial_11_gpt.txt): the character vocabulary and its
// embeddings, attention worked by hand and by scaled_dot_product_attention, the causal mask,
// layer norm with the residual, and the GPT's parameter count, training log and invented words.
#include <catch2/catch.hpp>

#include <string>

#include "test_support.h"

TEST_CASE("tutorial 11: tokens, attention, the causal mask, layer norm and a GPT's training log and words",
          "[apps][tutorial]") {
  int exit_code = -1;
  // The word list of part 5 is passed by path: the test does not run in the repository root.
  const std::string source = EMBER_SOURCE_DIR;
  const std::string output =
      ember::testing::run_program("tutorial_11_gpt", source + "/tests/apps/fixtures/words-sample.txt", &exit_code);
  const std::string expected = ember::testing::read_file(source + "/tests/apps/expected/tutorial_11_gpt.txt");
  REQUIRE(exit_code == 0);
  REQUIRE(output == expected);
}
