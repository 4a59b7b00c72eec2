// tests/apps/test_tutorial_10.cpp — §10, the chapter beyond the tutorial: tutorial_10_cnn
// prints, character for character, what tests/reference/tutorial_10_cnn.py printed in
// PyTorch (tests/apps/expected/tutorial_10_cnn.txt): the worked convolution, im2col,
// pooling's gradients, batch norm, and the CNN's training log and test accuracy.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "test_support.h"

TEST_CASE("tutorial 10: convolution, im2col, pooling, batch norm and a CNN's training log", "[apps][tutorial]") {
  int exit_code = -1;
  const std::string output = ember::testing::run_program("tutorial_10_cnn", "", &exit_code);
  std::string expected =
      ember::testing::read_file(std::string(EMBER_SOURCE_DIR) + "/tests/apps/expected/tutorial_10_cnn.txt");
  const std::string root = "/usr/share/datasets/fashion-mnist";
  if (!std::filesystem::is_directory(root)) {
    // Without the data set only part 5's training is skipped: parts 1-4 are still compared.
    const std::string part5 = "== 5. Training the CNN on 1000 Fashion-MNIST images ==\n";
    expected = expected.substr(0, expected.find(part5) + part5.size()) + "skipped: " + root +
               " not found (Debian's dataset-fashion-mnist)\n";
    WARN("Fashion-MNIST not installed: the training part of tutorial_10_cnn was skipped");
  }
  REQUIRE(exit_code == 0);
  REQUIRE(output == expected);
}
