// tests/nn/test_init.cpp — nn::init's formulas, gains, fans and generator use vs PyTorch.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>

#include <ember/ember.h>

#include "nn_test_helpers.h"

using namespace ember;
using ember::testing::load_reference;
using ember::testing::require_close;

namespace {

void check(const std::string& name, Shape shape, const std::function<void(const Tensor&)>& fill) {
  const auto reference = load_reference("nn.json")["init"];
  INFO(name);
  manual_seed(7);
  Tensor t = ember::empty(shape);
  fill(t);
  require_close(t, reference[name], 1e-6, 1e-7);
}

}  // namespace

TEST_CASE("init functions fill tensors as PyTorch does", "[nn][init]") {
  check("uniform", {4, 5}, [](const Tensor& t) { nn::init::uniform_(t, -1.0, 2.0); });
  check("normal", {4, 5}, [](const Tensor& t) { nn::init::normal_(t, 1.0, 0.5); });
  check("kaiming_uniform", {4, 5}, [](const Tensor& t) { nn::init::kaiming_uniform_(t); });
  check("kaiming_uniform_sqrt5", {4, 5}, [](const Tensor& t) { nn::init::kaiming_uniform_(t, std::sqrt(5.0)); });
  check("kaiming_uniform_fan_out_relu", {3, 4, 2},
        [](const Tensor& t) { nn::init::kaiming_uniform_(t, 0.0, "fan_out", "relu"); });
  check("kaiming_normal", {4, 5}, [](const Tensor& t) { nn::init::kaiming_normal_(t); });
  check("kaiming_normal_small", {3, 4}, [](const Tensor& t) { nn::init::kaiming_normal_(t, 0.0, "fan_in", "relu"); });
  check("xavier_uniform", {3, 4, 2}, [](const Tensor& t) { nn::init::xavier_uniform_(t, 2.0); });
  check("xavier_normal", {4, 5}, [](const Tensor& t) { nn::init::xavier_normal_(t); });
}

TEST_CASE("constant initialisers and no-grad filling", "[nn][init]") {
  Tensor t = ember::empty({2, 3}).requires_grad_();
  nn::init::constant_(t, 0.25);
  REQUIRE(t.equal(ember::full({2, 3}, 0.25)));
  REQUIRE(t.is_leaf());  // filled under no_grad: still a leaf, no graph recorded
  nn::init::zeros_(t);
  REQUIRE(t.sum().item<double>() == 0.0);
  nn::init::ones_(t);
  REQUIRE(t.sum().item<double>() == 6.0);
  nn::init::kaiming_uniform_(ember::empty({0, 3}));  // zero elements: a no-op, as PyTorch
}

TEST_CASE("calculate_gain and fans match PyTorch", "[nn][init]") {
  const auto reference = load_reference("nn.json")["init"];
  for (auto& [name, value] : reference["gains"].items()) {
    INFO(name);
    REQUIRE(nn::init::calculate_gain(name) == Approx(value.get<double>()).epsilon(1e-15));
  }
  REQUIRE(nn::init::calculate_gain("leaky_relu", 0.2) == Approx(reference["gain_leaky_0.2"].get<double>()));
  auto fans = nn::init::calculate_fan_in_and_fan_out(ember::empty({3, 4, 2}));
  REQUIRE(fans.first == reference["fans_3d"][0].get<std::int64_t>());
  REQUIRE(fans.second == reference["fans_3d"][1].get<std::int64_t>());
  REQUIRE_THROWS_WITH(nn::init::xavier_uniform_(ember::empty({3})), reference["fan_error"].get<std::string>());
  REQUIRE_THROWS_WITH(nn::init::calculate_gain("foo"), reference["gain_error"].get<std::string>());
  REQUIRE_THROWS_WITH(nn::init::kaiming_uniform_(ember::empty({2, 2}), 0.0, "fan_x"),
                      reference["mode_error"].get<std::string>());
  REQUIRE_THROWS_AS(nn::init::calculate_gain("foo"), ValueError);
}
