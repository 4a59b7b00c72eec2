// tests/nn/nn_test_helpers.h — small helpers shared by the nn tests: comparing an ember
// tensor with a PyTorch reference tensor from nn.json.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "test_support.h"

namespace ember::testing {

// Same shape and every value within atol + rtol * |expected|.
inline void require_close(const Tensor& actual, const nlohmann::json& expected, double rtol = 1e-5,
                          double atol = 1e-6) {
  const Tensor reference = tensor_from_json(expected);
  REQUIRE(actual.sizes() == reference.sizes());
  const std::vector<double> a = to_vector(actual);
  const std::vector<double> b = to_vector(reference);
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO("element " << i << ": ember " << a[i] << " vs PyTorch " << b[i]);
    REQUIRE(std::abs(a[i] - b[i]) <= atol + rtol * std::abs(b[i]));
  }
}

// Bit-for-bit equal values (for outputs that only depend on the random stream).
inline void require_equal(const Tensor& actual, const nlohmann::json& expected) {
  const Tensor reference = tensor_from_json(expected);
  REQUIRE(actual.sizes() == reference.sizes());
  REQUIRE(to_vector(actual) == to_vector(reference));
}

}  // namespace ember::testing
