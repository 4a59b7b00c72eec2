// tests/core/test_kernel_mode.cpp — EMBER_KERNELS and set_kernel_mode (core/kernel_mode.h).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

#include <ember/core/error.h>
#include <ember/core/kernel_mode.h>

using namespace ember;

TEST_CASE("EMBER_KERNELS values: fast, reference, empty; anything else names the variable", "[core][kernel_mode]") {
  CHECK(parse_kernel_mode("fast") == KernelMode::Fast);
  CHECK(parse_kernel_mode("reference") == KernelMode::Reference);
  CHECK(parse_kernel_mode("") == KernelMode::Fast);
  for (const char* bad : {"Reference", "slow", "reference ", "1"}) {
    INFO(bad);
    try {
      parse_kernel_mode(bad);
      FAIL("no error");
    } catch (const ValueError& error) {
      CHECK(std::string(error.what()) == "EMBER_KERNELS must be 'fast' or 'reference' (or unset, meaning 'fast'), got '" +
                                             std::string(bad) + "'");
    }
  }
}

TEST_CASE("kernel_mode_from_environment reads EMBER_KERNELS now", "[core][kernel_mode]") {
  unsetenv("EMBER_KERNELS");
  CHECK(kernel_mode_from_environment() == KernelMode::Fast);
  setenv("EMBER_KERNELS", "reference", 1);
  CHECK(kernel_mode_from_environment() == KernelMode::Reference);
  setenv("EMBER_KERNELS", "fast", 1);
  CHECK(kernel_mode_from_environment() == KernelMode::Fast);
  setenv("EMBER_KERNELS", "turbo", 1);
  CHECK_THROWS_AS(kernel_mode_from_environment(), ValueError);
  unsetenv("EMBER_KERNELS");
}

TEST_CASE("set_kernel_mode wins over EMBER_KERNELS, which is read once; the guard restores", "[core][kernel_mode]") {
  set_kernel_mode(KernelMode::Fast);
  setenv("EMBER_KERNELS", "reference", 1);
  CHECK(kernel_mode() == KernelMode::Fast);  // known already: the environment is not read again
  {
    KernelModeGuard reference(KernelMode::Reference);
    CHECK(kernel_mode() == KernelMode::Reference);
    {
      KernelModeGuard fast(KernelMode::Fast);
      CHECK(kernel_mode() == KernelMode::Fast);
    }
    CHECK(kernel_mode() == KernelMode::Reference);
  }
  CHECK(kernel_mode() == KernelMode::Fast);
  unsetenv("EMBER_KERNELS");
  CHECK(std::string(kernel_mode_name(KernelMode::Reference)) == "reference");
  CHECK(std::string(kernel_mode_name(KernelMode::Fast)) == "fast");
}
