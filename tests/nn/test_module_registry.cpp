// tests/nn/test_module_registry.cpp — nn::Module's registries and conversions against what
// PyTorch reports for the same custom module (tests/reference/gen_module_registry.py):
// register_parameter used directly (frozen, None), persistent and non-persistent buffers,
// named_buffers / named_children / named_modules, and to(device) / to(dtype) with gradients.
#include <catch2/catch.hpp>

#include <memory>

#include <ember/ember.h>

#include "nn_test_helpers.h"

using namespace ember;
using Catch::Matchers::Contains;
using ember::testing::load_reference;
using ember::testing::require_close;

namespace {

const nlohmann::json& reference() {
  static const nlohmann::json value = load_reference("module_registry.json");
  return value;
}

// gen_module_registry.py's Scaler: parameters and buffers registered by hand.
struct Scaler : nn::Module {
  nn::Parameter alpha, frozen;
  Tensor running, cache, count;
  Scaler() {
    alpha = register_parameter("alpha", ember::tensor({0.5, -1.5}));
    frozen = register_parameter("frozen", ember::tensor({2.0}), /*requires_grad=*/false);
    register_parameter("unused", Tensor());  // PyTorch: register_parameter("unused", None)
    running = register_buffer("running", ember::tensor({1.0, 2.0}));
    cache = register_buffer("cache", ember::tensor({9.0}), /*persistent=*/false);
    count = register_buffer("count", ember::tensor(3));
  }
  Tensor forward(const Tensor& x) override { return x * alpha * frozen + running; }
};

struct Model : nn::Module {
  std::shared_ptr<Scaler> scale;
  Tensor steps;
  std::shared_ptr<nn::Sequential> head;
  Model() {
    scale = register_module("scale", std::make_shared<Scaler>());
    steps = register_buffer("steps", ember::tensor({0.25}), /*persistent=*/false);
    head = register_module("head", nn::sequential({std::make_shared<nn::Linear>(2, 2), std::make_shared<nn::ReLU>()}));
  }
  Tensor forward(const Tensor& x) override { return (*head)((*scale)(x)); }
};

template <class Pairs>
std::vector<std::string> names_of(const Pairs& pairs) {
  std::vector<std::string> names;
  for (const auto& item : pairs) names.push_back(item.first);
  return names;
}

std::vector<std::string> strings(const nlohmann::json& value) { return value.get<std::vector<std::string>>(); }

}  // namespace

TEST_CASE("a custom module's registries match PyTorch's", "[nn][module]") {
  const auto& ref = reference();
  manual_seed(0);
  auto model = std::make_shared<Model>();
  REQUIRE(names_of(model->named_parameters()) == strings(ref["named_parameters"]));
  REQUIRE(names_of(model->named_buffers()) == strings(ref["named_buffers"]));
  REQUIRE(names_of(model->named_buffers(/*recurse=*/false)) == strings(ref["named_buffers_local"]));
  REQUIRE(names_of(model->scale->named_buffers(false)) == strings(ref["scale_named_buffers_local"]));
  REQUIRE(model->buffers().size() == ref["named_buffers"].size());
  REQUIRE(names_of(model->named_children()) == strings(ref["named_children"]));
  REQUIRE(names_of(model->head->named_children()) == strings(ref["head_named_children"]));
  REQUIRE(names_of(model->named_modules()) == strings(ref["named_modules"]));
  REQUIRE(model->named_children()[0].second.get() == model->scale.get());
  // Non-persistent buffers (scale.cache, steps) stay out of the state_dict.
  REQUIRE(model->state_dict().keys() == strings(ref["state_dict_keys"]));
  for (const auto& [name, parameter] : model->named_parameters()) {
    INFO(name);
    REQUIRE(parameter.requires_grad() == ref["requires_grad"][name].get<bool>());
  }
  // ... and loading one is an unexpected key, as in PyTorch.
  nn::StateDict state = model->state_dict();
  state.insert("scale.cache", ember::tensor({1.0}));
  std::ostringstream report;
  report << model->load_state_dict(state, /*strict=*/false);
  REQUIRE(report.str() == ref["load_with_non_persistent"].get<std::string>());
  REQUIRE(model->scale->cache.equal(ember::tensor({9.0})));
  REQUIRE_THROWS_WITH(model->load_state_dict(state), Contains("Unexpected key(s) in state_dict: \"scale.cache\""));
}

TEST_CASE("register_parameter: the returned handle, frozen parameters, None and re-registration", "[nn][module]") {
  Scaler scaler;
  // The handle returned is the registered tensor itself: in-place updates reach the module.
  REQUIRE(scaler.alpha.is_same(scaler.local_parameters().at("alpha")));
  {
    NoGradGuard no_grad;
    scaler.alpha.fill_(4.0);
  }
  REQUIRE(scaler.parameters()[0].equal(ember::tensor({4.0, 4.0})));
  REQUIRE_FALSE(scaler.frozen.requires_grad());
  REQUIRE(nn::count_parameters(scaler) == 2);                            // trainable only
  REQUIRE(nn::count_parameters(scaler, /*trainable_only=*/false) == 3);  // frozen too
  // "unused" (None) is registered but listed nowhere.
  REQUIRE(scaler.local_parameters().contains("unused"));
  REQUIRE(names_of(scaler.named_parameters()) == std::vector<std::string>{"alpha", "frozen"});
  REQUIRE_FALSE(scaler.state_dict().contains("unused"));
  // Registering a name again replaces the parameter, keeping its place.
  scaler.register_parameter("alpha", ember::tensor({7.0}));
  REQUIRE(names_of(scaler.named_parameters()) == std::vector<std::string>{"alpha", "frozen"});
  REQUIRE(scaler.parameters()[0].equal(ember::tensor({7.0})));
  // Names follow PyTorch's rules.
  REQUIRE_THROWS_WITH(scaler.register_parameter("", ember::zeros({1})), "parameter name can't be empty string \"\"");
  REQUIRE_THROWS_WITH(scaler.register_parameter("running", ember::zeros({1})), "attribute 'running' already exists");
  // A gradient flows to the registered parameter through forward.
  scaler(ember::ones({2})).sum().backward();
  REQUIRE(scaler.alpha.grad().defined());
  REQUIRE_FALSE(scaler.frozen.grad().defined());
}

TEST_CASE("Module::to(kCPU) on a CPU module changes nothing", "[nn][module]") {
  manual_seed(0);
  auto model = std::make_shared<Model>();
  (*model)(ember::ones({1, 2})).sum().backward();
  Tensor weight = model->head->at<nn::Linear>(0).weight;
  const void* data = weight.data_ptr();
  const void* grad_data = weight.grad().data_ptr();
  const void* buffer_data = model->scale->cache.data_ptr();
  nn::Module& returned = model->to(kCPU);
  REQUIRE(&returned == model.get());
  REQUIRE(weight.data_ptr() == data);  // not even a copy
  REQUIRE(weight.grad().data_ptr() == grad_data);
  REQUIRE(model->scale->cache.data_ptr() == buffer_data);
  REQUIRE(weight.is_same(model->parameters()[2]));
  REQUIRE(weight.requires_grad());
}

TEST_CASE("Module::to(\"cuda\") without a GPU fails cleanly and leaves the module on the CPU", "[nn][module]") {
  manual_seed(0);
  auto model = std::make_shared<Model>();
  const nn::StateDict before = model->state_dict();
  if (cuda::is_available()) {
    // With a GPU: everything moves, gradients and buffers included, and comes back intact.
    (*model)(ember::ones({1, 2})).sum().backward();
    model->to(Device("cuda"));
    for (const auto& p : model->parameters()) REQUIRE_FALSE(p.is_cpu());
    for (const auto& b : model->buffers()) REQUIRE_FALSE(b.is_cpu());
    REQUIRE_FALSE(model->scale->alpha.grad().is_cpu());
    model->to(kCPU);
    for (const auto& [name, tensor] : before) REQUIRE(model->state_dict().at(name).equal(tensor));
    return;
  }
  REQUIRE_THROWS_AS(model->to(Device("cuda")), Error);
  for (const auto& p : model->parameters()) REQUIRE(p.is_cpu());
  for (const auto& b : model->buffers()) REQUIRE(b.is_cpu());
  for (const auto& [name, tensor] : before) REQUIRE(model->state_dict().at(name).equal(tensor));
  // Still usable.
  REQUIRE((*model)(ember::ones({1, 2})).sizes() == std::vector<std::int64_t>{1, 2});
}

TEST_CASE("Module::to(dtype) converts parameters, buffers and gradients like PyTorch", "[nn][module]") {
  const auto& ref = reference()["to_float64"];
  manual_seed(0);  // the same Linear init as the reference
  auto model = std::make_shared<Model>();
  const Tensor x = ember::tensor({{1.0, 2.0}, {3.0, -1.0}});
  (*model)(x).sum().backward();
  Tensor alpha = model->scale->alpha;
  model->to(kFloat64);
  for (const auto& [name, p] : model->named_parameters()) {
    INFO(name);
    REQUIRE(dtype_name(p.dtype()) == ref["param_dtypes"][name].get<std::string>());
    REQUIRE(p.grad().defined() == ref["grad_dtypes"].contains(name));
    if (p.grad().defined()) REQUIRE(dtype_name(p.grad().dtype()) == ref["grad_dtypes"][name].get<std::string>());
  }
  for (const auto& [name, b] : model->named_buffers()) {
    INFO(name);
    REQUIRE(dtype_name(b.dtype()) == ref["buffer_dtypes"][name].get<std::string>());  // count stays int64
  }
  REQUIRE(alpha.dtype() == kFloat64);  // the handle a user holds sees the conversion
  REQUIRE(alpha.requires_grad());
  // The next backward accumulates into the converted gradients: twice PyTorch's values.
  (*model)(x.to(kFloat64)).sum().backward();
  for (const auto& [name, p] : model->named_parameters()) {
    if (!p.grad().defined()) continue;
    INFO(name);
    require_close(p.grad(), reference()["grad_after_second_backward"][name], 1e-6, 1e-7);
  }
  REQUIRE_THROWS_AS(model->to(kInt64), DTypeError);
  REQUIRE_THROWS_WITH(model->to(kInt64), reference()["to_int_error"].get<std::string>());
}
