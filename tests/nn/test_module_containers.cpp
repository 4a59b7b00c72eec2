// tests/nn/test_module_containers.cpp — what the GPT (issue 21) needs of nn::Module: ModuleList,
// Module::apply's post-order (the order nanoGPT's init draws weights in) and a parameter
// registered under two names (a tied weight) listed and converted once, as PyTorch does.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <ember/ember.h>
#include <ember/nn/module_list.h>

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
