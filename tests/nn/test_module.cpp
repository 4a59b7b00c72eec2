// tests/nn/test_module.cpp — nn::Module: registration, traversal, modes, conversions,
// state_dict / load_state_dict (with PyTorch's error messages) and the repr.
#include <catch2/catch.hpp>

#include <sstream>

#include <ember/ember.h>

#include "nn_test_helpers.h"

using namespace ember;
using ember::testing::load_reference;

namespace {

// The model whose PyTorch repr and key names gen_nn.py recorded.
std::shared_ptr<nn::Sequential> make_repr_model() {
  return nn::sequential({std::make_shared<nn::Flatten>(), std::make_shared<nn::Linear>(4, 3, false),
                         std::make_shared<nn::Sigmoid>(), std::make_shared<nn::Dropout>(0.25),
                         std::make_shared<nn::Tanh>(), std::make_shared<nn::Identity>(),
                         nn::sequential({std::make_shared<nn::Linear>(3, 2), std::make_shared<nn::ReLU>()})});
}

struct TwoLayer : nn::Module {
  std::shared_ptr<nn::Linear> first;
  std::shared_ptr<nn::Linear> second;
  Tensor scale;
  TwoLayer() {
    first = register_module("first", std::make_shared<nn::Linear>(2, 3));
    second = register_module("second", std::make_shared<nn::Linear>(3, 1));
    scale = register_buffer("scale", ember::ones({1}));
  }
  Tensor forward(const Tensor& x) override { return (*second)(ember::relu((*first)(x))) * scale; }
};

}  // namespace

TEST_CASE("Module repr matches PyTorch's layout", "[nn][module]") {
  auto model = make_repr_model();
  std::ostringstream text;
  text << model;
  REQUIRE(text.str() == load_reference("nn.json")["repr"].get<std::string>());
}

TEST_CASE("named_parameters and state_dict use PyTorch's dotted names in order", "[nn][module]") {
  auto model = make_repr_model();
  const auto reference = load_reference("nn.json");
  std::vector<std::string> names;
  for (auto& [name, p] : model->named_parameters()) names.push_back(name);
  REQUIRE(names == reference["named_parameters"].get<std::vector<std::string>>());
  REQUIRE(model->state_dict().keys() == reference["state_dict_keys"].get<std::vector<std::string>>());
  REQUIRE(model->parameters().size() == names.size());
  REQUIRE(model->children().size() == 7);
  REQUIRE(model->modules().size() == 10);  // itself, 7 children, the inner Sequential's 2
  REQUIRE(nn::count_parameters(*model) == 4 * 3 + 3 * 2 + 2);
}

TEST_CASE("custom modules register parameters, buffers and children", "[nn][module]") {
  auto model = std::make_shared<TwoLayer>();
  REQUIRE(model->name() == "TwoLayer");
  auto named = model->named_parameters();
  REQUIRE(named.size() == 4);
  REQUIRE(named[0].first == "first.weight");
  REQUIRE(named[3].first == "second.bias");
  REQUIRE(model->buffers().size() == 1);
  REQUIRE(model->state_dict().keys() ==
          std::vector<std::string>{"scale", "first.weight", "first.bias", "second.weight", "second.bias"});
  REQUIRE(model->named_parameters(false).empty());
  REQUIRE(model->named_modules()[1].first == "first");
  // The Parameter handle the model holds is the registered tensor itself.
  REQUIRE(model->first->weight.is_same(model->parameters()[0]));
  REQUIRE(model->first->weight.requires_grad());
  REQUIRE_THROWS_AS(model->register_parameter("a.b", ember::zeros({1})), ValueError);
  REQUIRE_THROWS_WITH(model->register_buffer("first", ember::zeros({1})), "attribute 'first' already exists");
  REQUIRE_THROWS_AS(nn::Module().forward(ember::zeros({1})), NotImplementedError);
}

TEST_CASE("train() and eval() reach every descendant", "[nn][module]") {
  auto model = make_repr_model();
  REQUIRE(model->is_training());
  model->eval();
  for (auto& module : model->modules()) REQUIRE_FALSE(module->is_training());
  model->train();
  for (auto& module : model->modules()) REQUIRE(module->is_training());
}

TEST_CASE("to(dtype) converts parameters in place, keeping the handles", "[nn][module]") {
  auto model = std::make_shared<TwoLayer>();
  Tensor weight = model->first->weight;
  const auto before = ember::testing::to_vector(weight);
  model->to(kFloat64);
  REQUIRE(weight.dtype() == kFloat64);
  REQUIRE(model->first->weight.dtype() == kFloat64);
  REQUIRE(model->scale.dtype() == kFloat64);
  REQUIRE(weight.requires_grad());
  auto after = ember::testing::to_vector(weight);
  for (std::size_t i = 0; i < before.size(); ++i) REQUIRE(after[i] == before[i]);
  REQUIRE_THROWS_AS(model->to(kInt64), DTypeError);
  Tensor out = (*model)(ember::ones({1, 2}, kFloat64));
  REQUIRE(out.dtype() == kFloat64);
}

TEST_CASE("zero_grad sets gradients to none or to zero", "[nn][module]") {
  auto model = std::make_shared<TwoLayer>();
  (*model)(ember::ones({4, 2})).sum().backward();
  REQUIRE(model->first->weight.grad().defined());
  model->zero_grad(false);
  REQUIRE(model->first->weight.grad().defined());
  REQUIRE(model->first->weight.grad().abs().sum().item<double>() == 0.0);
  model->zero_grad();
  for (auto& p : model->parameters()) REQUIRE_FALSE(p.grad().defined());
}

TEST_CASE("load_state_dict copies values and reports keys like PyTorch", "[nn][module]") {
  const auto reference = load_reference("nn.json");
  auto make = [] {
    return nn::sequential({std::make_shared<nn::Linear>(2, 3), std::make_shared<nn::ReLU>(),
                           std::make_shared<nn::Linear>(3, 1)});
  };
  auto source = make();
  auto target = make();
  std::ostringstream ok;
  ok << target->load_state_dict(source->state_dict());
  REQUIRE(ok.str() == "<All keys matched successfully>");
  REQUIRE(reference["load_ok_repr"].get<std::string>() == ok.str());
  REQUIRE(target->at<nn::Linear>(0).weight.equal(source->at<nn::Linear>(0).weight));
  REQUIRE_FALSE(target->at<nn::Linear>(0).weight.is_same(source->at<nn::Linear>(0).weight));

  // Missing + unexpected + size mismatch: one message listing all of them, nothing copied.
  nn::StateDict bad = source->state_dict();
  nn::StateDict edited;
  for (auto& [name, tensor] : bad)
    if (name != "2.bias") edited.insert(name, name == "0.weight" ? ember::zeros({4, 2}) : tensor);
  edited.insert("extra", ember::zeros({1}));
  auto fresh = make();
  Tensor before = fresh->at<nn::Linear>(2).weight.clone();
  REQUIRE_THROWS_WITH(fresh->load_state_dict(edited), reference["load_error_strict"].get<std::string>());
  REQUIRE(fresh->at<nn::Linear>(2).weight.equal(before));

  nn::StateDict loose;
  for (auto& [name, tensor] : source->state_dict())
    if (name != "2.bias") loose.insert(name, tensor);
  loose.insert("extra", ember::zeros({1}));
  std::ostringstream report;
  report << fresh->load_state_dict(loose, /*strict=*/false);
  REQUIRE(report.str() == reference["load_nonstrict_repr"].get<std::string>());
}

TEST_CASE("a Parameter prints with PyTorch's header line", "[nn][module]") {
  nn::Parameter p(ember::tensor({1.5, -2.0}));
  std::ostringstream text;
  text << p;
  REQUIRE(text.str() == "Parameter containing:\ntensor([ 1.5000, -2.0000], requires_grad=True)");
}
