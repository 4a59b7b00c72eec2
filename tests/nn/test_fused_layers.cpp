// tests/nn/test_fused_layers.cpp — the fusions nn runs on the training path:
//   * bias + ReLU: nn::Sequential runs Linear followed by ReLU as addmm and one in-place
//     ReLU pass (Linear::forward_relu). Same values, same gradients, the same tape as the
//     unfused layers (autograd::dump, saved tensors and versions included), PyTorch's
//     values and grad_fn tree; only exactly Linear then ReLU is fused. Conv2d then ReLU
//     likewise (Conv2d::forward_relu).
//   * the fused SGD step: bit-identical to the composite mul_/add_ sequence
//     (SGDOptions::fused = false) for every option, on odd sizes and on several threads,
//     and PyTorch's trajectories (tests/reference/fused.json, from gen_fused.py).
#include <catch2/catch.hpp>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <ember/autograd/graph_inspector.h>
#include <ember/ember.h>

#include "nn_test_helpers.h"

using namespace ember;
using ember::testing::load_reference;
using ember::testing::require_close;
using ember::testing::tensor_from_json;

namespace {

std::shared_ptr<nn::Sequential> seeded_mlp() {
  ember::manual_seed(123);
  return nn::sequential({std::make_shared<nn::Linear>(4, 6), std::make_shared<nn::ReLU>(),
                         std::make_shared<nn::Linear>(6, 5), std::make_shared<nn::ReLU>(),
                         std::make_shared<nn::Linear>(5, 3)});
}

// The same layers run one by one, never fused (the reference for the fused Sequential).
Tensor unfused_forward(const nn::Sequential& model, const Tensor& input) {
  Tensor output = input;
  for (std::size_t i = 0; i < model.size(); ++i) output = model[static_cast<std::int64_t>(i)]->forward(output);
  return output;
}

// The fused Sequential forward against the layers run one by one: the same values, the same
// tape (node names, saved tensors with shapes, strides and versions, leaves; the dump must
// show `saved_relu`) and the same parameter gradients. Returns the unfused output.
Tensor require_fused_equals_unfused(nn::Sequential& model, const Tensor& x, const std::string& saved_relu) {
  Tensor fused = model(x);
  Tensor unfused = unfused_forward(model, x);
  REQUIRE(fused.equal(unfused));
  REQUIRE(autograd::dump(fused) == autograd::dump(unfused));
  REQUIRE_THAT(autograd::dump(fused), Catch::Contains(saved_relu));
  fused.sum().backward();
  std::vector<Tensor> fused_grads;
  for (const auto& [name, parameter] : model.named_parameters()) fused_grads.push_back(parameter.grad().clone());
  model.zero_grad();
  unfused.sum().backward();
  std::size_t k = 0;
  for (const auto& [name, parameter] : model.named_parameters()) {
    INFO(name);
    REQUIRE(parameter.grad().equal(fused_grads[k++]));
  }
  return unfused;
}

// Node names depth first, two spaces per level: gen_fused.py's tree().
void tree(const std::shared_ptr<autograd::Node>& node, int depth, std::vector<std::string>& lines) {
  lines.push_back(std::string(2 * depth, ' ') + node->name());
  for (const auto& edge : node->next_edges())
    if (edge.is_valid()) tree(edge.node, depth + 1, lines);
}

// A Linear that does something else in forward: must not be fused away.
class ScaledLinear : public nn::Linear {
 public:
  using nn::Linear::Linear;
  Tensor forward(const Tensor& input) override { return nn::Linear::forward(input) * 2.0 - 1.0; }
};

// Random values for a parameter or gradient of `numel` elements.
Tensor values(std::int64_t numel, DType dtype, std::uint64_t seed) {
  ember::manual_seed(seed);
  return ember::randn({numel}).to(dtype);
}

}  // namespace

TEST_CASE("Sequential with Linear + ReLU matches PyTorch: values, gradients, grad_fn tree", "[nn][fused][linear_relu]") {
  const auto reference = load_reference("fused.json")["linear_relu"];
  auto model = seeded_mlp();
  Tensor x = tensor_from_json(reference["x"]);
  Tensor y = (*model)(x);
  require_close(y, reference["output"]);
  Tensor loss = ember::cross_entropy(y, tensor_from_json(reference["labels"]));
  require_close(loss, reference["loss"]);
  loss.backward();
  for (const auto& [name, parameter] : model->named_parameters()) {
    INFO(name);
    require_close(parameter.grad(), reference["grads"][name]);
  }
  std::vector<std::string> lines;
  tree(std::static_pointer_cast<autograd::Node>(y.grad_fn()), 0, lines);
  REQUIRE(lines == reference["output_tree"].get<std::vector<std::string>>());
}

TEST_CASE("the fused Linear + ReLU gives the unfused values, gradients and tape exactly", "[nn][fused][linear_relu]") {
  auto model = seeded_mlp();
  ember::manual_seed(5);
  Tensor x = ember::randn({9, 4});
  Tensor unfused = require_fused_equals_unfused(*model, x, "ReluBackward0  saved: result (output): [9, 5]");

  // Without autograd, and with a Linear as the last module (nothing to fuse with).
  NoGradGuard no_grad;
  REQUIRE((*model)(x).equal(unfused));
  REQUIRE_FALSE((*model)(x).requires_grad());
}

TEST_CASE("the fused Conv2d + ReLU gives the unfused values, gradients and tape exactly", "[nn][fused][conv_relu]") {
  // Issue 19's network in small: each Conv2d followed by a ReLU runs Conv2d::forward_relu.
  ember::manual_seed(11);
  auto model = nn::sequential({std::make_shared<nn::Conv2d>(2, 4, 3, nn::Conv2dOptions{.padding = 1}),
                               std::make_shared<nn::ReLU>(), std::make_shared<nn::MaxPool2d>(2),
                               std::make_shared<nn::Conv2d>(4, 3, 3, nn::Conv2dOptions{.bias = false}),
                               std::make_shared<nn::ReLU>(), std::make_shared<nn::Flatten>()});
  Tensor x = ember::randn({3, 2, 8, 8});
  const Tensor unfused = require_fused_equals_unfused(*model, x, "ReluBackward0  saved: result (output): [3, 4, 8, 8]");
  // Half the pre-activations are negative: the ReLU did run.
  REQUIRE(unfused.min().item<float>() == 0.0f);
}

TEST_CASE("only exactly Linear then ReLU is fused; the model looks the same", "[nn][fused][linear_relu]") {
  ember::manual_seed(7);
  Tensor x = ember::randn({3, 4});
  // A subclass with its own forward runs that forward.
  ember::manual_seed(1);
  auto scaled = nn::sequential({std::make_shared<ScaledLinear>(4, 2), std::make_shared<nn::ReLU>()});
  REQUIRE((*scaled)(x).equal(ember::relu(scaled->at<ScaledLinear>(0).forward(x))));
  // No bias, 3-D and 1-D inputs take the unfused route inside forward_relu.
  ember::manual_seed(2);
  auto no_bias = nn::sequential({std::make_shared<nn::Linear>(4, 3, false), std::make_shared<nn::ReLU>()});
  REQUIRE((*no_bias)(x).equal(unfused_forward(*no_bias, x)));
  ember::manual_seed(3);
  auto model = nn::sequential({std::make_shared<nn::Linear>(4, 3), std::make_shared<nn::ReLU>()});
  Tensor x3 = ember::randn({2, 3, 4});
  REQUIRE((*model)(x3).equal(unfused_forward(*model, x3)));
  REQUIRE((*model)(x[0]).equal(unfused_forward(*model, x[0])));
  // An empty batch.
  REQUIRE((*model)(ember::zeros({0, 4})).sizes() == Shape{0, 3});
  // Names, printing and the modules themselves are untouched by the fusion.
  std::vector<std::string> names;
  for (const auto& [name, parameter] : model->named_parameters()) names.push_back(name);
  REQUIRE(names == std::vector<std::string>{"0.weight", "0.bias"});
  std::ostringstream printed;
  printed << *model;
  REQUIRE(printed.str() ==
          "Sequential(\n  (0): Linear(in_features=4, out_features=3, bias=True)\n  (1): ReLU()\n)");
  // A hook on the pre-activation's consumer sees the same gradient as unfused.
  Tensor fused = (*model)(x);
  Tensor seen;
  fused.register_hook([&seen](const Tensor& grad) {
    seen = grad.clone();
    return Tensor();
  });
  fused.sum().backward();
  REQUIRE(seen.equal(ember::ones({3, 3})));
}

TEST_CASE("the fused SGD step is bit-identical to the composite ops", "[nn][fused][sgd]") {
  struct Setting {
    optim::SGDOptions options;
    const char* name;
  };
  const std::vector<Setting> settings = {
      {{.lr = 0.1}, "plain"},
      {{.lr = 1.0}, "lr 1"},
      {{.lr = 0.05, .weight_decay = 0.01}, "weight decay"},
      {{.lr = 0.05, .weight_decay = 1.0}, "weight decay 1"},
      {{.lr = 0.1, .momentum = 0.9}, "momentum"},
      {{.lr = 0.1, .momentum = 0.9, .dampening = 0.3, .weight_decay = 0.001}, "dampening"},
      {{.lr = 0.1, .momentum = 0.8, .weight_decay = 0.01, .nesterov = true}, "nesterov"},
      {{.lr = 0.07, .momentum = 0.5, .dampening = 0.1, .weight_decay = 0.02, .maximize = true}, "maximize"},
  };
  for (DType dtype : {kFloat32, kFloat64}) {
    for (std::int64_t numel : {1, 7, 1000, 1025, 70001}) {  // block tails; 70001 runs on several threads
      for (const Setting& setting : settings) {
        INFO(dtype_name(dtype) << " numel " << numel << " " << setting.name);
        Tensor fused_p = values(numel, dtype, 1).requires_grad_();
        Tensor composite_p = fused_p.detach().clone().requires_grad_();
        optim::SGDOptions composite_options = setting.options;
        composite_options.fused = false;
        optim::SGD fused({fused_p}, setting.options);
        optim::SGD composite({composite_p}, composite_options);
        for (int step = 0; step < 3; ++step) {
          Tensor grad = values(numel, dtype, 10 + step);
          fused_p.mutable_grad() = grad;
          composite_p.mutable_grad() = grad.clone();
          fused.step();
          composite.step();
          REQUIRE(fused_p.equal(composite_p));
        }
        if (setting.options.momentum != 0.0) {
          REQUIRE(fused.state_dict().at("state.0.momentum_buffer").equal(composite.state_dict().at("state.0.momentum_buffer")));
        }
      }
    }
  }
}

TEST_CASE("the fused SGD step follows PyTorch's trajectories", "[nn][fused][sgd]") {
  const auto reference = load_reference("fused.json")["sgd"];
  for (const auto& [name, run] : reference["runs"].items()) {
    INFO(name);
    const auto& o = run["options"];
    optim::SGDOptions options{.lr = o.value("lr", 0.0), .momentum = o.value("momentum", 0.0),
                              .dampening = o.value("dampening", 0.0), .weight_decay = o.value("weight_decay", 0.0),
                              .nesterov = o.value("nesterov", false), .maximize = o.value("maximize", false)};
    const DType dtype = run["dtype"] == "float64" ? kFloat64 : kFloat32;
    Tensor p = tensor_from_json(reference["start"]).to(dtype).requires_grad_();
    optim::SGD optimizer({p}, options);
    for (std::size_t k = 0; k < run["steps"].size(); ++k) {
      INFO("step " << k + 1);
      p.mutable_grad() = tensor_from_json(reference["grads"][k]).to(dtype);
      optimizer.step();
      require_close(p, run["steps"][k], dtype == kFloat64 ? 1e-12 : 1e-5, dtype == kFloat64 ? 1e-14 : 1e-6);
    }
  }
}

TEST_CASE("SGD falls back to the composite ops where the fused step does not apply", "[nn][fused][sgd]") {
  // A non-contiguous parameter (a transposed leaf).
  Tensor base = values(12, kFloat32, 3).reshape({3, 4});
  Tensor p = base.t().detach().requires_grad_();
  Tensor q = p.detach().clone().requires_grad_();
  REQUIRE_FALSE(p.is_contiguous());
  optim::SGD fused({p}, {.lr = 0.1, .momentum = 0.9});
  optim::SGD composite({q}, {.lr = 0.1, .momentum = 0.9, .fused = false});
  for (int step = 0; step < 3; ++step) {
    Tensor grad = values(12, kFloat32, 20 + step).reshape({4, 3});
    p.mutable_grad() = grad;
    q.mutable_grad() = grad.clone();
    fused.step();
    composite.step();
    REQUIRE(p.equal(q));
  }
  // A restored, non-contiguous momentum buffer: the step still matches, and resuming
  // from a contiguous one continues bit for bit.
  Tensor r = values(6, kFloat32, 4).requires_grad_();
  Tensor s = r.detach().clone().requires_grad_();
  optim::SGD straight({r}, {.lr = 0.1, .momentum = 0.9, .nesterov = true});
  r.mutable_grad() = values(6, kFloat32, 30);
  straight.step();
  optim::SGD first({s}, {.lr = 0.1, .momentum = 0.9, .nesterov = true});
  s.mutable_grad() = values(6, kFloat32, 30);
  first.step();
  optim::SGD resumed({s}, {.lr = 0.1, .momentum = 0.9, .nesterov = true});
  resumed.load_state_dict(ember::load_from_bytes(ember::save_to_bytes(first.state_dict())));
  for (int step = 0; step < 2; ++step) {
    r.mutable_grad() = values(6, kFloat32, 31 + step);
    s.mutable_grad() = values(6, kFloat32, 31 + step);
    straight.step();
    resumed.step();
  }
  REQUIRE(r.equal(s));
}

TEST_CASE("the fused SGD step keeps in-place semantics: a graph that saved the parameter notices",
          "[nn][fused][sgd]") {
  Tensor w = ember::ones({3}).requires_grad_();
  Tensor loss = (w * w).sum();  // MulBackward0 saves w
  loss.backward(Tensor(), /*retain_graph=*/true);
  optim::SGD optimizer({w}, {.lr = 0.1});
  optimizer.step();
  REQUIRE_THROWS_AS(loss.backward(), AutogradError);
}
