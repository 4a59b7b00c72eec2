// tests/nn/test_clip_grad.cpp — nn::utils::clip_grad_norm_ / clip_grad_value_ against PyTorch
// (tests/reference/gen_clip_grad.py -> clip_grad.json): the returned pre-clip norm and the
// clipped gradients for norms 2, 1, inf and 3, float32 and float64, parameters without a
// gradient, and nan / inf gradients (scaled anyway, as PyTorch does by default).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include <ember/ember.h>
#include <ember/nn/clip_grad.h>

#include "nn_test_helpers.h"

using namespace ember;
using ember::testing::load_reference;
using ember::testing::tensor_from_json;
using ember::testing::to_vector;

namespace {

// Within rtol (float32 sums in another order than PyTorch's), nan where PyTorch has nan,
// the same infinities.
void check_close(const Tensor& actual, const nlohmann::json& expected, double rtol) {
  const Tensor reference = tensor_from_json(expected);
  REQUIRE(actual.sizes() == reference.sizes());
  const std::vector<double> a = to_vector(actual), b = to_vector(reference);
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO("element " << i << ": ember " << a[i] << " vs PyTorch " << b[i]);
    if (std::isnan(b[i])) {
      CHECK(std::isnan(a[i]));
    } else if (std::isinf(b[i])) {
      CHECK(a[i] == b[i]);
    } else {
      CHECK(std::abs(a[i] - b[i]) <= 1e-12 + rtol * std::abs(b[i]));
    }
  }
}

}  // namespace

TEST_CASE("clip_grad_norm_ and clip_grad_value_ match PyTorch", "[nn][clip_grad]") {
  const nlohmann::json reference = load_reference("clip_grad.json");
  for (const auto& c : reference.at("cases")) {
    INFO(c.at("name").get<std::string>());
    const DType dtype = c.at("dtype") == "float64" ? kFloat64 : kFloat32;
    const double rtol = dtype == kFloat64 ? 1e-13 : 2e-6;
    std::vector<Tensor> parameters;
    for (const auto& grad : c.at("grads")) {
      if (grad.is_null()) {
        parameters.push_back(ember::zeros({2}, dtype).requires_grad_());
        continue;
      }
      Tensor gradient = tensor_from_json(grad).to(dtype);
      Tensor parameter = ember::zeros(gradient.sizes(), dtype).requires_grad_();
      parameter.mutable_grad() = gradient;
      parameters.push_back(parameter);
    }
    if (c.contains("clip_value")) {
      nn::utils::clip_grad_value_(parameters, c.at("clip_value"));
    } else {
      const double norm_type =
          c.at("norm_type").is_string() ? std::numeric_limits<double>::infinity() : c.at("norm_type").get<double>();
      Tensor norm = nn::utils::clip_grad_norm_(parameters, c.at("max_norm"), norm_type);
      CHECK(norm.dim() == 0);
      CHECK(norm.dtype() == dtype);
      check_close(norm, c.at("total_norm"), rtol);
    }
    for (std::size_t i = 0; i < parameters.size(); ++i) {
      INFO("parameter " << i);
      const auto& expected = c.at("clipped")[i];
      if (expected.is_null()) {
        CHECK_FALSE(parameters[i].grad().defined());  // skipped, not given a gradient
      } else {
        check_close(parameters[i].grad(), expected, rtol);
      }
    }
  }
}

TEST_CASE("clip_grad_norm_ without gradients returns 0; error_if_nonfinite refuses a nan norm", "[nn][clip_grad]") {
  std::vector<Tensor> parameters = {ember::zeros({3}).requires_grad_()};
  CHECK(nn::utils::clip_grad_norm_(parameters, 1.0).item<float>() == 0.0f);
  parameters[0].mutable_grad() = ember::tensor({1.0f, std::nanf(""), 2.0f});
  CHECK_THROWS_MATCHES(nn::utils::clip_grad_norm_(parameters, 1.0, 2.0, /*error_if_nonfinite=*/true), ValueError,
                       Catch::Matchers::Message(
                           "The total norm of order 2.0 for gradients from `parameters` is non-finite, so it cannot "
                           "be clipped. To disable this error and scale the gradients by the non-finite norm anyway, "
                           "set `error_if_nonfinite=False`"));
  // Refused before anything was scaled.
  CHECK(to_vector(parameters[0].grad())[0] == 1.0);
}
