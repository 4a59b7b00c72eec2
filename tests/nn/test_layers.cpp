// tests/nn/test_layers.cpp — Linear (PyTorch's seeded init, forward, backward, shapes,
// errors), activation layers, Flatten/Identity and Dropout, against tests/reference/nn.json.
#include <catch2/catch.hpp>

#include <ember/ember.h>

#include "nn_test_helpers.h"

using namespace ember;
using ember::testing::load_reference;
using ember::testing::require_close;
using ember::testing::require_equal;
using ember::testing::tensor_from_json;

TEST_CASE("Linear draws PyTorch's initial weights after manual_seed", "[nn][linear]") {
  const auto reference = load_reference("nn.json")["linear_init"];
  manual_seed(123);
  nn::Linear lin(5, 3);
  nn::Linear no_bias(3, 2, false);
  require_equal(lin.weight, reference["weight"]);
  require_equal(lin.bias, reference["bias"]);
  require_equal(no_bias.weight, reference["nobias_weight"]);
  REQUIRE_FALSE(no_bias.bias.defined());
  REQUIRE(no_bias.parameters().size() == 1);
  REQUIRE(lin.extra_repr() == "in_features=5, out_features=3, bias=True");
}

TEST_CASE("Linear forward and backward match PyTorch", "[nn][linear]") {
  const auto reference = load_reference("nn.json");
  manual_seed(123);
  nn::Linear lin(5, 3);
  Tensor x = tensor_from_json(reference["linear_forward"]["x"]);
  Tensor y = lin(x);
  require_close(y, reference["linear_forward"]["y"]);
  REQUIRE(y.grad_fn()->name() == reference["linear_forward"]["grad_fn"].get<std::string>());
  y.sum().backward();
  require_close(lin.weight.grad(), reference["linear_forward"]["weight_grad"]);
  require_close(lin.bias.grad(), reference["linear_forward"]["bias_grad"]);

  SECTION("non-contiguous input") {
    Tensor x_nc = tensor_from_json(reference["linear_noncontiguous"]["x"]).t();
    REQUIRE_FALSE(x_nc.is_contiguous());
    require_close(lin(x_nc), reference["linear_noncontiguous"]["y"]);
  }
  SECTION("batched 3-D input broadcasts over the leading dims") {
    require_close(lin(tensor_from_json(reference["linear_3d"]["x"])), reference["linear_3d"]["y"]);
  }
  SECTION("1-D input") { require_close(lin(x[0]), reference["linear_1d"]["y"]); }
  SECTION("empty batch") {
    Tensor empty_out = lin(ember::zeros({0, 5}));
    REQUIRE(empty_out.sizes() == Shape{0, 3});
  }
  SECTION("wrong feature count") {
    REQUIRE_THROWS_WITH(lin(ember::zeros({2, 4})), reference["linear_shape_error"].get<std::string>());
    REQUIRE_THROWS_AS(lin(ember::zeros({2, 4})), ShapeError);
  }
}

TEST_CASE("activation layers forward to their ops", "[nn][layers]") {
  Tensor x = ember::tensor({{-1.0, 0.0, 2.0}});
  REQUIRE(nn::ReLU()(x).equal(ember::tensor({{0.0, 0.0, 2.0}})));
  REQUIRE(nn::Sigmoid()(x).allclose(ember::sigmoid(x)));
  REQUIRE(nn::Tanh()(x).allclose(ember::tanh(x)));
  REQUIRE(nn::Identity()(x).is_same(x));
  Tensor images = ember::zeros({2, 1, 3, 4});
  REQUIRE(nn::Flatten()(images).sizes() == Shape{2, 12});
  REQUIRE(nn::Flatten(0)(images).sizes() == Shape{24});
  // 0-d and empty inputs pass through the element-wise layers unchanged in shape.
  REQUIRE(nn::ReLU()(ember::tensor(-3.0)).item<double>() == 0.0);
  REQUIRE(nn::Sigmoid()(ember::zeros({0, 3})).sizes() == Shape{0, 3});
}

TEST_CASE("Sequential runs its modules in order and is indexable", "[nn][layers]") {
  auto layers = nn::sequential({std::make_shared<nn::Linear>(2, 3), std::make_shared<nn::ReLU>()});
  REQUIRE(layers->size() == 2);
  REQUIRE((*layers)[-1]->name() == "ReLU");
  REQUIRE(layers->at<nn::Linear>(0).out_features == 3);
  REQUIRE_THROWS_WITH((*layers)[2], "index 2 is out of range");
  REQUIRE_THROWS_AS(layers->at<nn::ReLU>(0), ValueError);
  Tensor out = (*layers)(ember::ones({4, 2}));
  REQUIRE(out.sizes() == Shape{4, 3});
  REQUIRE(out.min().item<double>() >= 0.0);
}

TEST_CASE("Dropout draws PyTorch's mask in training and is the identity in eval", "[nn][dropout]") {
  const auto reference = load_reference("nn.json");
  manual_seed(0);
  nn::Dropout drop(0.5);
  require_close(drop(ember::ones({10})), reference["dropout_small"]);
  require_close(drop(ember::ones({4, 8})), reference["dropout_large"]);
  nn::Dropout light(0.2);
  require_close(light(ember::ones({20})), reference["dropout_p02"]);

  drop.eval();
  Tensor x = ember::ones({3});
  REQUIRE(drop(x).is_same(x));
  REQUIRE(drop.extra_repr() == "p=0.5, inplace=False");
  REQUIRE(nn::Dropout(1.0)(ember::ones({5})).sum().item<double>() == 0.0);
  REQUIRE_THROWS_WITH(nn::Dropout(1.5), "dropout probability has to be between 0 and 1, but got 1.5");
}
