// tests/cuda/test_gpu_skip.cpp — how a test that needs a GPU reports "skipped".
//
// A GPU test calls EMBER_REQUIRE_GPU() (cuda_test_support.h), which records the skip through
// the listener every test binary shares (tests/support/skip_listener.cpp) and returns.
#include <catch2/catch.hpp>

#include "cuda_test_support.h"

TEST_CASE("GPU skip: without a GPU the skip is recorded, with one nothing is skipped", "[cuda][skip]") {
  // This test itself is real on both kinds of machine: it checks the availability query
  // agrees with the device count the skip macro relies on.
  REQUIRE(ember::cuda::is_available() == (ember::cuda::device_count() > 0));
}
