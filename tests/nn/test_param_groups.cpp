// tests/nn/test_param_groups.cpp — optimizers with several parameter groups (PyTorch's
// param_groups, nn/optimizer.h's ParamGroup) against tests/reference/gen_param_groups.py:
// nanoGPT's AdamW split (matrices decayed, vectors not), per-group lr / betas / eps, Adam
// with amsgrad in one group, SGD with different momentum per group — parameters after each
// step and the final state_dict equal PyTorch's; a state_dict round trip into an optimizer
// built with other settings continues the run; one group is the plain list bit for bit;
// the per-group lr accessors; and the errors (PyTorch's messages where it has them).
#include <catch2/catch.hpp>

#include <memory>

#include <ember/ember.h>

#include "nn_test_helpers.h"

using namespace ember;
using Catch::Matchers::Contains;
using ember::testing::load_reference;
using ember::testing::require_close;
using ember::testing::tensor_from_json;
using ember::testing::to_vector;

namespace {

const nlohmann::json& reference() {
  static const nlohmann::json value = load_reference("param_groups.json");
  return value;
}

// Fresh copies of the reference model's parameters, in model order: w1 [2, 3], b1 [3],
// w2 [3, 2], b2 [2].
std::vector<Tensor> model() {
  std::vector<Tensor> params;
  for (const auto& t : reference()["start"]) params.push_back(tensor_from_json(t).requires_grad_());
  return params;
}

// A group's own settings from the reference's Python dict (betas -> beta1, beta2).
optim::ParamGroup group_from_json(std::vector<Tensor> params, const nlohmann::json& settings) {
  optim::ParamGroup group{.params = std::move(params)};
  for (const auto& [key, value] : settings.items()) {
    if (key == "lr") group.lr = value.get<double>();
    else if (key == "momentum") group.momentum = value.get<double>();
    else if (key == "dampening") group.dampening = value.get<double>();
    else if (key == "betas") group.beta1 = value[0].get<double>(), group.beta2 = value[1].get<double>();
    else if (key == "eps") group.eps = value.get<double>();
    else if (key == "weight_decay") group.weight_decay = value.get<double>();
    else if (key == "nesterov") group.nesterov = value.get<bool>();
    else if (key == "amsgrad") group.amsgrad = value.get<bool>();
    else if (key == "maximize") group.maximize = value.get<bool>();
    else FAIL("unknown setting " << key);
  }
  return group;
}

// nanoGPT's split: dim >= 2 in group 0, the rest in group 1 (so numbering w1, w2, b1, b2).
std::vector<optim::ParamGroup> grouped(const std::vector<Tensor>& params, const nlohmann::json& settings) {
  std::vector<Tensor> matrices, vectors;
  for (const auto& p : params) (p.dim() >= 2 ? matrices : vectors).push_back(p);
  return {group_from_json(matrices, settings[0]), group_from_json(vectors, settings[1])};
}

std::unique_ptr<optim::Optimizer> make(const std::string& kind, std::vector<optim::ParamGroup> groups,
                                       const nlohmann::json& defaults, bool fused = true) {
  auto defaults_group = group_from_json({}, defaults);
  if (kind == "sgd") {
    optim::SGDOptions options{.lr = *defaults_group.lr};
    options.momentum = defaults_group.momentum.value_or(0.0);
    options.fused = fused;
    return std::make_unique<optim::SGD>(std::move(groups), options);
  }
  optim::AdamOptions options{.lr = *defaults_group.lr};
  if (defaults_group.beta1) options.beta1 = *defaults_group.beta1, options.beta2 = *defaults_group.beta2;
  options.weight_decay = defaults_group.weight_decay;
  if (kind == "adam") return std::make_unique<optim::Adam>(std::move(groups), options);
  return std::make_unique<optim::AdamW>(std::move(groups), options);
}

void step(optim::Optimizer& optimizer, std::vector<Tensor>& params, std::size_t k) {
  for (std::size_t i = 0; i < params.size(); ++i) params[i].mutable_grad() = tensor_from_json(reference()["grads"][k][i]);
  optimizer.step();
}

// Group g's hyper-parameters and params in a state_dict, as PyTorch's param_groups[g] JSON.
nlohmann::json group_json(const nn::StateDict& state, std::size_t g) {
  nlohmann::json group = nlohmann::json::object();
  const std::string prefix = "param_groups." + std::to_string(g) + ".";
  for (const auto& [key, tensor] : state) {
    if (key.rfind(prefix, 0) != 0) continue;
    const std::string name = key.substr(prefix.size());
    if (name == "params") {
      std::vector<std::int64_t> indices;
      for (double index : to_vector(tensor)) indices.push_back(static_cast<std::int64_t>(index));
      group[name] = indices;
    } else if (tensor.dtype() == kBool) {
      group[name] = tensor.item<bool>();
    } else if (tensor.dim() == 1) {
      group[name] = {tensor[0].item<double>(), tensor[1].item<double>()};
    } else {
      group[name] = tensor.item<double>();
    }
  }
  return group;
}

// The optimizer's state_dict equals PyTorch's final one: the same state entries per
// parameter index (values close, `step` exact) and the same param_groups.
void require_same_state(const nn::StateDict& state, const nlohmann::json& expected) {
  std::size_t state_entries = 0;
  for (const auto& [index, slots] : expected["state"].items()) {
    for (const auto& [name, value] : slots.items()) {
      INFO("state." << index << "." << name);
      const Tensor* tensor = state.find("state." + index + "." + name);
      REQUIRE(tensor != nullptr);
      if (name == "step") REQUIRE(to_vector(*tensor) == to_vector(tensor_from_json(value)));
      else require_close(*tensor, value, 1e-5, 1e-6);
      ++state_entries;
    }
  }
  std::size_t group_entries = 0;
  for (std::size_t g = 0; g < expected["param_groups"].size(); ++g) {
    INFO("param_groups." << g);
    const nlohmann::json group = group_json(state, g);
    REQUIRE(group == expected["param_groups"][g]);
    group_entries += group.size();
  }
  REQUIRE(state.size() == state_entries + group_entries);  // nothing else
}

nn::StateDict through_file_format(const nn::StateDict& state) { return load_from_bytes(save_to_bytes(state)); }

}  // namespace

TEST_CASE("optimizers with parameter groups take PyTorch's steps and save PyTorch's state_dict", "[nn][optim][param_groups]") {
  for (const auto& c : reference()["cases"]) {
    const std::string kind = c["optimizer"];
    for (bool fused : {true, false}) {
      if (!fused && kind != "sgd") continue;  // only SGD has a fused step to turn off
      INFO(c["name"].get<std::string>() << (fused ? "" : " (composite)"));
      auto params = model();
      auto optimizer = make(kind, grouped(params, c["groups"]), c["defaults"], fused);
      REQUIRE(optimizer->param_group_count() == 2);
      for (std::size_t k = 0; k < c["trajectory"].size(); ++k) {
        step(*optimizer, params, k);
        INFO("step " << k + 1);
        for (std::size_t i = 0; i < params.size(); ++i) require_close(params[i], c["trajectory"][k][i], 1e-5, 1e-6);
      }
      require_same_state(optimizer->state_dict(), c["final"]);
      require_same_state(through_file_format(optimizer->state_dict()), c["final"]);
    }
  }
}

TEST_CASE("a state_dict with parameter groups resumes PyTorch's run in an optimizer built with other settings",
          "[nn][optim][param_groups]") {
  for (const auto& c : reference()["cases"]) {
    INFO(c["name"].get<std::string>());
    const std::string kind = c["optimizer"];
    auto params = model();
    auto saved = make(kind, grouped(params, c["groups"]), c["defaults"]);
    step(*saved, params, 0);
    const nn::StateDict state = through_file_format(saved->state_dict());

    std::vector<Tensor> copies;
    for (const auto& p : params) copies.push_back(p.detach().clone().requires_grad_());
    auto resumed = make(kind, grouped(copies, nlohmann::json::array({nlohmann::json::object(), nlohmann::json::object()})),
                        c["other"]);
    resumed->load_state_dict(state);
    for (std::size_t g = 0; g < 2; ++g) REQUIRE(resumed->group_learning_rate(g) == saved->group_learning_rate(g));
    for (std::size_t k = 1; k < c["trajectory"].size(); ++k) {
      step(*resumed, copies, k);
      INFO("step " << k + 1);
      for (std::size_t i = 0; i < copies.size(); ++i) require_close(copies[i], c["trajectory"][k][i], 1e-5, 1e-6);
    }
    require_same_state(resumed->state_dict(), c["final"]);
  }
}

TEST_CASE("one parameter group is the plain parameter list, bit for bit", "[nn][optim][param_groups]") {
  auto check = [](auto make_list, auto make_group) {
    auto a = model(), b = model();
    auto listed = make_list(a);
    auto single = make_group(std::vector<optim::ParamGroup>{{.params = b}});
    for (std::size_t k = 0; k < 3; ++k) {
      step(*listed, a, k);
      step(*single, b, k);
    }
    for (std::size_t i = 0; i < a.size(); ++i) REQUIRE(a[i].equal(b[i]));
    const nn::StateDict x = listed->state_dict(), y = single->state_dict();
    REQUIRE(x.keys() == y.keys());
    for (const auto& [key, tensor] : x) REQUIRE(tensor.equal(y.at(key)));
  };
  check([](std::vector<Tensor>& p) { return std::make_unique<optim::AdamW>(p, optim::AdamOptions{.lr = 0.05}); },
        [](std::vector<optim::ParamGroup> g) { return std::make_unique<optim::AdamW>(g, optim::AdamOptions{.lr = 0.05}); });
  check([](std::vector<Tensor>& p) { return std::make_unique<optim::Adam>(p, optim::AdamOptions{.lr = 0.05, .amsgrad = true}); },
        [](std::vector<optim::ParamGroup> g) {
          return std::make_unique<optim::Adam>(g, optim::AdamOptions{.lr = 0.05, .amsgrad = true});
        });
  check([](std::vector<Tensor>& p) { return std::make_unique<optim::SGD>(p, optim::SGDOptions{.lr = 0.1, .momentum = 0.9}); },
        [](std::vector<optim::ParamGroup> g) {
          return std::make_unique<optim::SGD>(g, optim::SGDOptions{.lr = 0.1, .momentum = 0.9});
        });
}

TEST_CASE("learning rates per parameter group", "[nn][optim][param_groups]") {
  auto params = model();
  optim::AdamW optimizer({{.params = {params[0], params[2]}, .weight_decay = 0.1}, {.params = {params[1], params[3]}, .lr = 0.01}},
                         {.lr = 0.05});
  REQUIRE(optimizer.learning_rate() == 0.05);  // group 0's
  REQUIRE(optimizer.group_learning_rate(1) == 0.01);
  REQUIRE(optimizer.group_parameters(1).size() == 2);
  REQUIRE(optimizer.group_parameters(1)[0].is_same(params[1]));
  REQUIRE(optimizer.parameters()[1].is_same(params[2]));  // numbered across groups
  // Unset fields come from the constructor's options (AdamW's default decay for weight_decay).
  REQUIRE(optimizer.options(0).lr == 0.05);
  REQUIRE(*optimizer.options(0).weight_decay == 0.1);
  REQUIRE(*optimizer.options(1).weight_decay == 1e-2);
  optimizer.set_group_learning_rate(1, 0.5);
  REQUIRE(optimizer.learning_rate() == 0.05);
  REQUIRE(optimizer.group_learning_rate(1) == 0.5);
  REQUIRE(optimizer.state_dict().at("param_groups.1.lr").item<double>() == 0.5);
  optimizer.set_learning_rate(0.2);  // every group, like a loop over param_groups
  REQUIRE(optimizer.group_learning_rate(0) == 0.2);
  REQUIRE(optimizer.group_learning_rate(1) == 0.2);
  optimizer.set_momentum(0.7);
  REQUIRE(optimizer.options(1).beta1 == 0.7);
  REQUIRE_THROWS_AS(optimizer.group_learning_rate(2), IndexError);
  REQUIRE_THROWS_AS(optimizer.set_group_learning_rate(2, 0.1), IndexError);
  REQUIRE_THROWS_AS(optimizer.group_parameters(5), IndexError);

  // The group's lr is the one its parameters step with: b1 moves by AdamW's first step
  // (lr * sign(g), after the decay) with its own lr.
  auto q = model();
  optim::AdamW split({{.params = {q[0], q[2]}}, {.params = {q[1], q[3]}, .lr = 0.25, .weight_decay = 0.0}}, {.lr = 1e-3});
  const Tensor before = q[1].detach().clone();
  step(split, q, 0);
  const auto moved = to_vector(before - q[1].detach());
  const auto gradient = to_vector(tensor_from_json(reference()["grads"][0][1]));
  for (std::size_t i = 0; i < moved.size(); ++i)
    REQUIRE(moved[i] == Approx(gradient[i] > 0 ? 0.25 : gradient[i] < 0 ? -0.25 : 0.0).margin(1e-6));
}

TEST_CASE("parameter group errors: PyTorch's messages, nothing changed on a failed load", "[nn][optim][param_groups]") {
  const auto& errors = reference()["errors"];
  auto p = model();
  REQUIRE_THROWS_WITH((optim::AdamW({{.params = {p[0], p[1]}}, {.params = {p[1], p[2]}}}, {})),
                      errors["shared"].get<std::string>());
  REQUIRE_THROWS_AS((optim::SGD({{.params = {p[0]}}, {.params = {p[0]}}}, {})), ValueError);
  // The same tensor twice in one group is not "another group" (PyTorch only warns).
  REQUIRE_NOTHROW(optim::SGD(std::vector<optim::ParamGroup>{{.params = {p[0], p[0]}}}, {}));
  // An empty group is allowed, as in PyTorch; an empty plain list is not.
  optim::SGD with_empty({{.params = {p[0]}}, {.params = {}}}, {.lr = 0.1});
  REQUIRE(with_empty.state_dict().at("param_groups.1.params").numel() == 0);
  with_empty.load_state_dict(with_empty.state_dict());
  // Each group's values are checked like the constructor's (PyTorch checks only the defaults).
  REQUIRE_THROWS_WITH((optim::SGD({{.params = {p[0]}}, {.params = {p[1]}, .lr = -1.0}}, {})), "Invalid learning rate: -1.0");
  REQUIRE_THROWS_WITH((optim::SGD({{.params = {p[0]}, .nesterov = true}}, {.lr = 0.1})),
                      "Nesterov momentum requires a momentum and zero dampening");
  REQUIRE_THROWS_WITH((optim::Adam({{.params = {p[0]}, .beta2 = 1.0}}, {})), "Invalid beta parameter at index 1: 1.0");
  // A setting the optimizer does not have is refused (PyTorch would keep it unused).
  REQUIRE_THROWS_WITH((optim::SGD({{.params = {p[0]}}, {.params = {p[1]}, .beta1 = 0.5}}, {})),
                      "SGD has no hyper-parameter 'beta1' (parameter group 1)");
  REQUIRE_THROWS_WITH((optim::AdamW({{.params = {p[0]}, .momentum = 0.9}}, {})),
                      "AdamW has no hyper-parameter 'momentum' (parameter group 0)");
  // A non-leaf tensor in any group.
  REQUIRE_THROWS_WITH((optim::SGD({{.params = {p[0]}}, {.params = {p[1] * 2}}}, {})), "can't optimize a non-leaf Tensor");

  // Loading: the number of groups and each group's size must match (PyTorch's messages).
  auto a = model();
  optim::SGD two({{.params = {a[0], a[2]}, .momentum = 0.9}, {.params = {a[1], a[3]}, .lr = 0.5}}, {.lr = 0.1});
  step(two, a, 0);
  const nn::StateDict two_groups = two.state_dict();
  REQUIRE(two_groups.at("param_groups.1.params").equal(ember::arange(2, 4, 1, kInt64)));
  auto b = model();
  optim::SGD one(b, {.lr = 0.1, .momentum = 0.9});
  REQUIRE_THROWS_WITH(one.load_state_dict(two_groups), Contains(errors["group_count"].get<std::string>()));
  auto c = model();
  optim::SGD other_split({{.params = {c[0], c[1], c[2]}, .momentum = 0.3}, {.params = {c[3]}, .lr = 0.7}}, {.lr = 0.01});
  REQUIRE_THROWS_WITH(other_split.load_state_dict(two_groups), Contains(errors["group_size"].get<std::string>()));
  REQUIRE(other_split.group_learning_rate(0) == 0.01);  // unchanged
  REQUIRE(other_split.options(0).momentum == 0.3);
  REQUIRE(other_split.group_learning_rate(1) == 0.7);
  // A one-group checkpoint into a two-group optimizer, and a group missing from the file.
  auto d = model();
  optim::SGD single(d, {.lr = 0.1, .momentum = 0.9});
  REQUIRE_THROWS_WITH(two.load_state_dict(single.state_dict()), Contains(errors["group_count"].get<std::string>()));
  nn::StateDict missing_group;
  for (const auto& [key, tensor] : two_groups)
    if (key.rfind("param_groups.1.", 0) != 0) missing_group.insert(key, tensor);
  REQUIRE_THROWS_WITH(two.load_state_dict(missing_group), Contains(errors["group_count"].get<std::string>()));
  // A bad value in group 1 leaves group 0 as it was too.
  nn::StateDict bad_lr = two_groups;
  bad_lr.insert("param_groups.0.lr", ember::full({}, 0.9, kFloat64));
  bad_lr.insert("param_groups.1.lr", ember::full({}, -2.0, kFloat64));
  REQUIRE_THROWS_WITH(two.load_state_dict(bad_lr), Contains("Invalid learning rate: -2.0"));
  REQUIRE(two.group_learning_rate(0) == 0.1);
  REQUIRE(two.group_learning_rate(1) == 0.5);
  // Indices that are not this group's own.
  nn::StateDict swapped = two_groups;
  swapped.insert("param_groups.1.params", ember::arange(0, 2, 1, kInt64));
  REQUIRE_THROWS_WITH(two.load_state_dict(swapped), Contains("param_groups.1.params must be the indices 2..3 in order"));
  // State is checked per group: group 1 has no momentum, so a momentum_buffer there is unexpected.
  nn::StateDict extra_buffer = two_groups;
  extra_buffer.insert("state.2.momentum_buffer", ember::zeros({3}));
  REQUIRE_THROWS_WITH(two.load_state_dict(extra_buffer), Contains("Unexpected key(s) in state_dict: \"state.2.momentum_buffer\""));
  // A state-only checkpoint keeps every group's settings.
  nn::StateDict state_only;
  for (const auto& [key, tensor] : two_groups)
    if (key.rfind("state.", 0) == 0) state_only.insert(key, tensor);
  auto e = model();
  optim::SGD fresh({{.params = {e[0], e[2]}, .momentum = 0.9}, {.params = {e[1], e[3]}, .lr = 0.3}}, {.lr = 0.2});
  fresh.load_state_dict(state_only);
  REQUIRE(fresh.group_learning_rate(0) == 0.2);
  REQUIRE(fresh.group_learning_rate(1) == 0.3);
  REQUIRE(fresh.state_dict().at("state.1.momentum_buffer").equal(two_groups.at("state.1.momentum_buffer")));
}
