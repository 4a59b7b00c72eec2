// tests/nn/test_optim.cpp — SGD, Adam and AdamW follow PyTorch's update formulas step by
// step (gradients set by hand), validate their options with PyTorch's messages, and save /
// restore their state.
#include <catch2/catch.hpp>

#include <functional>
#include <memory>

#include <ember/ember.h>

#include "nn_test_helpers.h"

using namespace ember;
using ember::testing::load_reference;
using ember::testing::require_close;
using ember::testing::tensor_from_json;

namespace {

using MakeOptimizer = std::function<std::unique_ptr<optim::Optimizer>(std::vector<Tensor>)>;

// Runs the three hand-set gradient steps of gen_nn.py and compares every step.
void run_trajectory(const std::string& name, const MakeOptimizer& make) {
  const auto reference = load_reference("nn.json");
  INFO(name);
  Tensor p = tensor_from_json(reference["optim_start"]).requires_grad_();
  auto optimizer = make({p});
  const auto& steps = reference["optim"][name];
  for (std::size_t k = 0; k < steps.size(); ++k) {
    p.mutable_grad() = tensor_from_json(reference["optim_grads"][k]);
    optimizer->step();
    INFO("step " << k + 1);
    require_close(p, steps[k], 1e-5, 1e-6);
  }
}

template <class Optimizer, class Options>
MakeOptimizer maker(Options options) {
  return [options](std::vector<Tensor> params) { return std::make_unique<Optimizer>(std::move(params), options); };
}

}  // namespace

TEST_CASE("SGD variants match PyTorch's updates", "[nn][optim]") {
  run_trajectory("sgd", maker<optim::SGD>(optim::SGDOptions{.lr = 0.1}));
  run_trajectory("sgd_momentum", maker<optim::SGD>(optim::SGDOptions{.lr = 0.1, .momentum = 0.9}));
  run_trajectory("sgd_dampening", maker<optim::SGD>(optim::SGDOptions{.lr = 0.1, .momentum = 0.9, .dampening = 0.5}));
  run_trajectory("sgd_nesterov", maker<optim::SGD>(optim::SGDOptions{.lr = 0.1, .momentum = 0.9, .nesterov = true}));
  run_trajectory("sgd_weight_decay",
                 maker<optim::SGD>(optim::SGDOptions{.lr = 0.1, .momentum = 0.5, .weight_decay = 0.1}));
  run_trajectory("sgd_maximize", maker<optim::SGD>(optim::SGDOptions{.lr = 0.1, .maximize = true}));
}

TEST_CASE("Adam and AdamW match PyTorch's updates", "[nn][optim]") {
  run_trajectory("adam", maker<optim::Adam>(optim::AdamOptions{.lr = 0.01}));
  run_trajectory("adam_weight_decay", maker<optim::Adam>(optim::AdamOptions{
                                          .lr = 0.01, .beta1 = 0.8, .beta2 = 0.99, .eps = 1e-6, .weight_decay = 0.1}));
  run_trajectory("adam_amsgrad", maker<optim::Adam>(optim::AdamOptions{.lr = 0.01, .amsgrad = true}));
  auto adamw = optim::AdamW::default_options();
  adamw.lr = 0.01;
  run_trajectory("adamw", maker<optim::AdamW>(adamw));
  // The reference ran torch.optim.AdamW(params, lr=0.01): the default decay applies.
  run_trajectory("adamw", maker<optim::AdamW>(optim::AdamOptions{.lr = 0.01}));
  run_trajectory("adamw_weight_decay", maker<optim::AdamW>(optim::AdamOptions{.lr = 0.1, .weight_decay = 0.5}));
}

TEST_CASE("optimizers reject bad options with PyTorch's messages", "[nn][optim]") {
  const auto errors = load_reference("nn.json")["optim_errors"];
  std::vector<Tensor> one = {ember::zeros({1}).requires_grad_()};
  REQUIRE_THROWS_WITH((optim::SGD(one, {.lr = -1.0})), errors["sgd_lr"].get<std::string>());
  REQUIRE_THROWS_WITH((optim::SGD(one, {.lr = 0.1, .momentum = -0.5})), errors["sgd_momentum"].get<std::string>());
  REQUIRE_THROWS_WITH((optim::SGD(one, {.lr = 0.1, .nesterov = true})), errors["sgd_nesterov"].get<std::string>());
  REQUIRE_THROWS_WITH((optim::Adam(one, {.beta1 = 1.0})), errors["adam_beta"].get<std::string>());
  REQUIRE_THROWS_WITH((optim::Adam(one, {.eps = -1.0})), errors["adam_eps"].get<std::string>());
  // (A bare {} would be ambiguous: an empty parameter list or an empty list of groups, both
  // PyTorch's "optimizer got an empty parameter list".)
  REQUIRE_THROWS_WITH((optim::SGD(std::vector<Tensor>{}, {.lr = 0.1})), errors["empty"].get<std::string>());
  REQUIRE_THROWS_AS((optim::SGD(std::vector<Tensor>{}, {.lr = 0.1})), ValueError);
  REQUIRE_THROWS_WITH((optim::SGD(std::vector<optim::ParamGroup>{}, {.lr = 0.1})), errors["empty"].get<std::string>());
}

// Issue 18, item 6: Module::zero_grad and Optimizer::zero_grad are one function
// (nn::zero_grad), with PyTorch's set_to_none=False rule: a .grad left with a graph by a
// create_graph backward is detached before it is zeroed (torch.optim.Optimizer.zero_grad:
// p.grad.detach_() then zero_()). Before, both zeroed it in place, graph and all.
TEST_CASE("zero_grad(false) detaches a create_graph gradient, for Module and Optimizer alike", "[nn][optim]") {
  auto graph_gradient_of = [](const Tensor& w) {
    (w * w).sum().backward({}, /*retain_graph=*/false, /*create_graph=*/true);
    REQUIRE(w.grad().requires_grad());
    REQUIRE(w.grad().grad_fn() != nullptr);
  };
  Tensor w = ember::ones({3}).requires_grad_();
  optim::SGD optimizer({w}, {.lr = 0.1});
  graph_gradient_of(w);
  optimizer.zero_grad(false);
  CHECK(w.grad().equal(ember::zeros({3})));
  CHECK_FALSE(w.grad().requires_grad());
  CHECK(w.grad().grad_fn() == nullptr);

  nn::Linear layer(2, 2);
  graph_gradient_of(layer.weight);
  layer.zero_grad(false);
  CHECK(layer.weight.grad().equal(ember::zeros({2, 2})));
  CHECK_FALSE(layer.weight.grad().requires_grad());
  CHECK(layer.weight.grad().grad_fn() == nullptr);
}

TEST_CASE("zero_grad and skipping parameters without gradients", "[nn][optim]") {
  Tensor a = ember::ones({2}).requires_grad_();
  Tensor b = ember::ones({2}).requires_grad_();
  optim::SGD optimizer({a, b}, {.lr = 1.0});
  (a * 3.0).sum().backward();
  optimizer.step();  // b has no grad: untouched
  REQUIRE(a.equal(ember::full({2}, -2.0)));
  REQUIRE(b.equal(ember::ones({2})));
  optimizer.zero_grad(false);
  REQUIRE(a.grad().equal(ember::zeros({2})));
  optimizer.zero_grad();
  REQUIRE_FALSE(a.grad().defined());
  REQUIRE(optimizer.learning_rate() == 1.0);
  optimizer.set_learning_rate(0.5);
  REQUIRE(optimizer.learning_rate() == 0.5);
}

TEST_CASE("optimizer state_dict round-trips and resumes identically", "[nn][optim]") {
  const auto reference = load_reference("nn.json");
  auto start = [&] { return tensor_from_json(reference["optim_start"]).requires_grad_(); };
  auto grad = [&](int k) { return tensor_from_json(reference["optim_grads"][k]); };

  // Straight run of three steps.
  Tensor p = start();
  optim::Adam straight({p}, {.lr = 0.01});
  for (int k = 0; k < 3; ++k) {
    p.mutable_grad() = grad(k);
    straight.step();
  }
  // One step, save the state (through safetensors bytes), resume in a new optimizer.
  Tensor q = start();
  optim::Adam first({q}, {.lr = 0.01});
  q.mutable_grad() = grad(0);
  first.step();
  const auto keys = first.state_dict().keys();
  REQUIRE(std::vector<std::string>(keys.begin(), keys.begin() + 3) ==
          std::vector<std::string>{"state.0.step", "state.0.exp_avg", "state.0.exp_avg_sq"});
  auto restored_state = ember::load_from_bytes(ember::save_to_bytes(first.state_dict()));
  optim::Adam resumed({q}, {.lr = 0.01});
  resumed.load_state_dict(restored_state);
  for (int k = 1; k < 3; ++k) {
    q.mutable_grad() = grad(k);
    resumed.step();
  }
  REQUIRE(q.equal(p));

  nn::StateDict wrong;
  wrong.insert("state.3.exp_avg", ember::zeros({3, 2}));
  REQUIRE_THROWS_AS(resumed.load_state_dict(wrong), ValueError);
  nn::StateDict misshapen = first.state_dict();
  misshapen.insert("state.0.exp_avg", ember::zeros({2, 2}));
  REQUIRE_THROWS_WITH(resumed.load_state_dict(misshapen), Catch::Matchers::Contains("size mismatch for state.0.exp_avg"));

  // SGD's momentum buffer is created by the first step as a copy of the gradient.
  Tensor s = start();
  optim::SGD sgd({s}, {.lr = 0.1, .momentum = 0.9});
  s.mutable_grad() = grad(0);
  sgd.step();
  REQUIRE(sgd.state_dict().at("state.0.momentum_buffer").equal(grad(0)));
}
