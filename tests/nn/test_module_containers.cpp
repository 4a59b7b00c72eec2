// tests/nn/test_module_containers.cpp — what the GPT (issue 21) needs of nn::Module: ModuleList,
// Module::apply's post-order (the order nanoGPT's init draws weights in) and a parameter
// registered under two names (a tied weight) listed and converted once, as PyTorch does.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <ember/ember.h>
#include <ember/nn/module_list.h>

#include "test_support.h"

using namespace ember;

namespace {

std::vector<std::string> names_of(const std::vector<std::pair<std::string, Tensor>>& named) {
  std::vector<std::string> names;
  for (const auto& item : named) names.push_back(item.first);
  return names;
}

}  // namespace

TEST_CASE("Module::apply visits children before their parent, in registration order", "[nn][module]") {
  auto inner = nn::sequential({std::make_shared<nn::ReLU>(), std::make_shared<nn::Tanh>()});
  auto outer = nn::sequential({inner, std::make_shared<nn::Sigmoid>()});
  std::vector<std::string> visited;
  outer->apply([&](nn::Module& module) { visited.push_back(module.name()); });
  REQUIRE(visited == std::vector<std::string>{"ReLU", "Tanh", "Sequential", "Sigmoid", "Sequential"});
}

TEST_CASE("ModuleList registers its modules by index and has no forward", "[nn][module]") {
  nn::ModuleList list;
  list.push_back(std::make_shared<nn::Linear>(2, 3));
  list.push_back(std::make_shared<nn::Linear>(3, 1));
  REQUIRE(list.size() == 2);
  REQUIRE(names_of(list.named_parameters()) == std::vector<std::string>{"0.weight", "0.bias", "1.weight", "1.bias"});
  REQUIRE(list[-1].get() == list[1].get());
  REQUIRE_THROWS_WITH(list[2], "index 2 is out of range");
  REQUIRE_THROWS_AS(list.forward(zeros({1, 2})), NotImplementedError);
}

TEST_CASE("A parameter registered under two names is listed and updated once", "[nn][module]") {
  auto first = std::make_shared<nn::Linear>(3, 2, false);
  auto second = std::make_shared<nn::Linear>(3, 2, false);
  second->weight = second->register_parameter("weight", first->weight);
  auto model = nn::sequential({first, second});
  REQUIRE(names_of(model->named_parameters()) == std::vector<std::string>{"0.weight"});
  std::vector<std::string> state_keys;
  for (const auto& [key, value] : model->state_dict()) state_keys.push_back(key);
  REQUIRE(state_keys == std::vector<std::string>{"0.weight", "1.weight"});
  model->to(kFloat64);
  REQUIRE(first->weight.is_same(second->weight));
  REQUIRE(first->weight.dtype() == kFloat64);
}

TEST_CASE("to(dtype) while an earlier graph is alive: new gradients keep the new dtype's precision",
          "[nn][module]") {
  // The old graph holds the parameter's float32 gradient accumulator; after the conversion the
  // float64 backward must not go through it (it cast every gradient to float32: PyTorch's
  // set_data forgets the accumulator when the dtype changes, and so does ember).
  manual_seed(3);
  auto kept = std::make_shared<nn::Linear>(4, 3);
  auto fresh = std::make_shared<nn::Linear>(4, 3);
  {
    NoGradGuard no_grad;
    fresh->weight.copy_(kept->weight);
    fresh->bias.copy_(kept->bias);
  }
  const Tensor x = randn({5, 4}, TensorOptions().dtype(kFloat64)) * 1e3;
  Tensor old_loss = (*kept)(x.to(kFloat32)).sum();  // its graph stays alive below
  old_loss.backward(Tensor(), /*retain_graph=*/true);
  kept->zero_grad();
  kept->to(kFloat64);
  fresh->to(kFloat64);
  ((*kept)(x) * x.narrow(1, 0, 3)).sum().backward();
  ((*fresh)(x) * x.narrow(1, 0, 3)).sum().backward();
  REQUIRE(kept->weight.grad().dtype() == kFloat64);
  REQUIRE(ember::testing::to_vector(kept->weight.grad()) == ember::testing::to_vector(fresh->weight.grad()));
  REQUIRE(old_loss.defined());
}
