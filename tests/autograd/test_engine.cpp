// tests/autograd/test_engine.cpp — the tape and the engine: backward, grad, retain_graph,
// create_graph, accumulation, retain_grad, no_grad, detach, in-place history.
// Expected numbers come from PyTorch (tests/reference/gen_autograd_engine.py).
#include <catch2/catch.hpp>

#include <thread>

#include <ember/ember.h>

#include "test_support.h"

using ember::Tensor;
using ember::autograd::TensorList;
using ember::testing::load_reference;
using ember::testing::tensor_from_json;
using ember::testing::to_vector;

namespace {

const nlohmann::json& reference() {
  static const nlohmann::json value = load_reference("autograd_engine.json");
  return value;
}

void require_matches(const Tensor& actual, const std::string& key) {
  INFO(key);
  REQUIRE(actual.defined());
  Tensor expected = tensor_from_json(reference().at(key));
  REQUIRE(actual.sizes() == expected.sizes());
  std::vector<double> a = to_vector(actual), e = to_vector(expected);
  for (std::size_t i = 0; i < a.size(); ++i) REQUIRE(a[i] == Approx(e[i]).epsilon(1e-5).margin(1e-6));
}

Tensor leaf(ember::NestedData data) { return ember::tensor(data, ember::requires_grad()); }

}  // namespace

TEST_CASE("backward accumulates into leaves across calls", "[autograd][engine]") {
  Tensor x = leaf({1.0, -2.0, 0.5});
  Tensor y = (x * x + x * 3).sum();
  y.backward({}, /*retain_graph=*/true);
  require_matches(x.grad(), "accumulate_once");
  y.backward();
  require_matches(x.grad(), "accumulate_twice");
}

TEST_CASE("backward needs an explicit gradient for non-scalar outputs", "[autograd][engine]") {
  Tensor x = leaf({{1.0, 2.0}, {3.0, 4.0}});
  Tensor y = x * x;
  REQUIRE_THROWS_WITH(y.backward(), "grad can be implicitly created only for scalar outputs");
  REQUIRE_THROWS_AS(y.backward(ember::ones({3})), ember::ShapeError);
  REQUIRE_THROWS_WITH(y.backward(ember::ones({3})),
                      "Mismatch in shape: grad_output[0] has a shape of torch.Size([3]) and output[0] has a shape of "
                      "torch.Size([2, 2]).");
  REQUIRE_THROWS_WITH(ember::autograd::backward({y, y}, {ember::ones({2, 2})}), "got 2 tensors and 1 gradients");
  y.backward(ember::tensor({{1.0, 0.5}, {-1.0, 2.0}}));
  require_matches(x.grad(), "explicit_gradient");
}

TEST_CASE("backward on a tensor without history is refused", "[autograd][engine]") {
  Tensor x = ember::tensor({1.0, 2.0});
  REQUIRE_THROWS_AS(x.sum().backward(), ember::AutogradError);
  REQUIRE_THROWS_WITH(x.sum().backward(), "element 0 of tensors does not require grad and does not have a grad_fn");
}

TEST_CASE("a tensor used twice receives the sum of both gradients", "[autograd][engine]") {
  Tensor x = leaf({0.3, 1.2});
  Tensor z = x.exp();
  (z * z + z).sum().backward();
  require_matches(x.grad(), "used_twice");
}

TEST_CASE("retain_grad keeps a non-leaf's gradient", "[autograd][engine]") {
  Tensor x = leaf({1.0, 2.0, 3.0});
  Tensor h = x * 2;
  h.retain_grad();
  REQUIRE(h.retains_grad());
  (h * h).sum().backward();
  require_matches(h.grad(), "retain_grad_h");
  require_matches(x.grad(), "retain_grad_x");
  Tensor plain = ember::tensor({1.0});
  REQUIRE_THROWS_WITH(plain.retain_grad(), "can't retain_grad on Tensor that has requires_grad=False");
}

TEST_CASE("a second backward through a freed graph is refused", "[autograd][engine]") {
  Tensor x = leaf({1.0, 2.0});
  Tensor y = (x.sigmoid() * x).sum();
  y.backward();
  REQUIRE_THROWS_AS(y.backward(), ember::AutogradError);
  REQUIRE_THROWS_WITH(y.backward(), Catch::StartsWith("Trying to backward through the graph a second time (or "
                                                      "directly access saved tensors after they have already been "
                                                      "freed)."));
}

TEST_CASE("grad returns gradients without touching .grad", "[autograd][engine][grad]") {
  const nlohmann::json& ref = reference();
  Tensor w = ember::tensor({{0.1, -0.2}, {0.3, 0.4}, {-0.5, 0.6}}, ember::requires_grad());
  Tensor b = leaf({0.05, -0.05});
  Tensor x = ember::tensor({{1.0, 2.0, 3.0}, {-1.0, 0.5, 0.0}});
  Tensor loss = ember::cross_entropy(ember::relu(x.matmul(w) + b) * 2, ember::tensor({1, 0}));
  REQUIRE(loss.item<double>() == Approx(tensor_from_json(ref["mlp_loss"]).item<double>()).epsilon(1e-5));
  TensorList grads = ember::autograd::grad({loss}, {w, b});
  require_matches(grads[0], "mlp_grad_w");
  require_matches(grads[1], "mlp_grad_b");
  REQUIRE_FALSE(w.grad().defined());
  REQUIRE_FALSE(b.grad().defined());
}

TEST_CASE("grad checks its inputs", "[autograd][engine][grad]") {
  Tensor x = leaf({1.0, 2.0});
  Tensor unused = leaf({3.0});
  Tensor constant = ember::tensor({1.0});
  Tensor y = (x * x).sum();
  REQUIRE_THROWS_WITH(ember::autograd::grad({y}, {unused}, {}, true),
                      "One of the differentiated Tensors appears to not have been used in the graph. Set "
                      "allow_unused=True if this is the desired behavior.");
  TensorList grads = ember::autograd::grad({y}, {x, unused}, {}, true, false, /*allow_unused=*/true);
  REQUIRE(grads[0].defined());
  REQUIRE_FALSE(grads[1].defined());
  REQUIRE_THROWS_WITH(ember::autograd::grad({y}, {constant}, {}, true),
                      "One of the differentiated Tensors does not require grad");
}

TEST_CASE("create_graph gives second derivatives", "[autograd][engine][higher-order]") {
  Tensor x = leaf({1.0, 2.0, -0.5});
  TensorList g = ember::autograd::grad({x.pow(3).sum()}, {x}, {}, std::nullopt, /*create_graph=*/true);
  require_matches(g[0], "first_derivative");
  REQUIRE(g[0].requires_grad());
  TensorList gg = ember::autograd::grad({g[0].sum()}, {x});
  require_matches(gg[0], "second_derivative");

  Tensor s = leaf({0.2, -1.0});
  TensorList sg = ember::autograd::grad({s.sigmoid().sum()}, {s}, {}, std::nullopt, true);
  require_matches(ember::autograd::grad({sg[0].sum()}, {s})[0], "sigmoid_second_derivative");

  Tensor y = leaf({1.5, -0.5});
  y.pow(3).sum().backward({}, false, /*create_graph=*/true);
  require_matches(ember::autograd::grad({y.grad().sum()}, {y})[0], "grad_of_grad");
}

TEST_CASE("graphs that point back at their own tensors are freed with them", "[autograd][engine][memory]") {
  // backward(create_graph=true) stores a .grad whose graph ends in the leaf's AccumulateGrad
  // (held weakly, so no cycle). That graph also saves y itself for pow's formula — the cycle
  // PyTorch documents for backward(create_graph=True): differentiating the .grad (which frees
  // the saved tensors) or resetting .grad breaks it, in ember as in PyTorch.
  // h.mul_(h) saves h in the node that becomes h's grad_fn: that one may never cycle.
  std::weak_ptr<ember::TensorImpl> leaf_alive;
  std::weak_ptr<ember::GradFn> grad_graph_alive;
  {
    Tensor y = leaf({1.5, -0.5});
    y.pow(3).sum().backward({}, false, /*create_graph=*/true);
    REQUIRE(y.grad().grad_fn() != nullptr);
    leaf_alive = y.impl_ptr();
    grad_graph_alive = y.grad().grad_fn();
    ember::autograd::grad({y.grad().sum()}, {y});
  }
  REQUIRE(leaf_alive.expired());
  REQUIRE(grad_graph_alive.expired());

  std::weak_ptr<ember::GradFn> inplace_node_alive;
  {
    Tensor x = leaf({1.0, 2.0});
    Tensor h = x * 2;
    h.mul_(h);
    REQUIRE(h.grad_fn()->name() == "MulBackward0");
    inplace_node_alive = h.grad_fn();
  }
  REQUIRE(inplace_node_alive.expired());
}

TEST_CASE("no_grad, set_grad_enabled and enable_grad switch recording", "[autograd][grad_mode]") {
  Tensor x = leaf({1.0, 2.0});
  {
    ember::NoGradGuard no_grad;
    Tensor y = x * 2;
    REQUIRE_FALSE(y.requires_grad());
    REQUIRE(y.grad_fn() == nullptr);
    {
      ember::EnableGradGuard enable;
      REQUIRE((x * 2).requires_grad());
    }
    REQUIRE_FALSE(ember::is_grad_enabled());
  }
  REQUIRE(ember::is_grad_enabled());
  ember::set_grad_enabled(false);
  REQUIRE_FALSE((x + 1).requires_grad());
  ember::set_grad_enabled(true);
  REQUIRE((x + 1).requires_grad());
  REQUIRE((x + 1).grad_fn()->name() == "AddBackward0");
}

TEST_CASE("grad mode is per thread", "[autograd][grad_mode]") {
  Tensor x = leaf({1.0});
  ember::NoGradGuard no_grad;  // only this thread stops recording
  bool other_thread_records = false;
  std::thread worker([&] { other_thread_records = (x * 2).requires_grad(); });
  worker.join();
  REQUIRE(other_thread_records);
  REQUIRE_FALSE((x * 2).requires_grad());
}

TEST_CASE("leaves, requires_grad_ and detach", "[autograd][leaf]") {
  Tensor x = ember::tensor({1.0, 2.0});
  REQUIRE(x.is_leaf());
  REQUIRE_FALSE(x.requires_grad());
  x.requires_grad_();
  REQUIRE(x.requires_grad());
  Tensor y = x * 3;
  REQUIRE_FALSE(y.is_leaf());
  REQUIRE_THROWS_WITH(y.requires_grad_(false),
                      Catch::StartsWith("you can only change requires_grad flags of leaf variables."));
  REQUIRE_THROWS_WITH(ember::tensor({1, 2}).requires_grad_(),
                      "only Tensors of floating point dtype can require gradients");
  Tensor d = y.detach();
  REQUIRE(d.is_leaf());
  REQUIRE_FALSE(d.requires_grad());
  REQUIRE(d.data_ptr() == y.data_ptr());  // same data, no copy
  x.detach_();
  REQUIRE_FALSE(x.requires_grad());
  Tensor z = leaf({2.0, 3.0});
  (z * z.detach()).sum().backward();
  require_matches(z.grad(), "detach_grad");
}

TEST_CASE("modifying a saved tensor in place is detected at backward", "[autograd][version]") {
  Tensor x = leaf({1.0, 2.0, 3.0});
  Tensor e = x.exp();
  Tensor y = e.sum();  // sum saves nothing; exp saved its output e
  REQUIRE(e.version() == 0);
  {
    ember::NoGradGuard no_grad;
    e.mul_(2);
  }
  REQUIRE(e.version() == 1);
  REQUIRE_THROWS_AS(y.backward(), ember::AutogradError);
  Tensor x2 = leaf({1.0, 2.0, 3.0});
  Tensor e2 = x2.exp();
  Tensor y2 = e2.sum();
  {
    ember::NoGradGuard no_grad;
    e2.add_(1.0);
  }
  REQUIRE_THROWS_WITH(y2.backward(),
                      "one of the variables needed for gradient computation has been modified by an inplace "
                      "operation: [torch.FloatTensor [3]], which is output 0 of ExpBackward0, is at version 1; "
                      "expected version 0 instead. Hint: enable anomaly detection to find the operation that failed "
                      "to compute its gradient, with torch.autograd.set_detect_anomaly(True).");
}

TEST_CASE("modifying a saved leaf in place names just its type", "[autograd][version]") {
  Tensor a = leaf({1.0, 2.0, 3.0});
  Tensor c = leaf({2.0, 2.0, 2.0}) * 1.0;
  Tensor y = (a * c).sum();
  {
    ember::NoGradGuard no_grad;
    a.add_(1.0);
  }
  REQUIRE_THROWS_WITH(y.backward(),
                      "one of the variables needed for gradient computation has been modified by an inplace "
                      "operation: [torch.FloatTensor [3]] is at version 1; expected version 0 instead. Hint: enable "
                      "anomaly detection to find the operation that failed to compute its gradient, with "
                      "torch.autograd.set_detect_anomaly(True).");
}

TEST_CASE("modifying a saved non-leaf in place names its current producer", "[autograd][version]") {
  // PyTorch: "... [torch.FloatTensor [3]], which is output 0 of AddBackward0, is at version 2; ..."
  Tensor x = leaf({1.0, 2.0, 3.0});
  Tensor h = x * 2;
  h.mul_(h);   // saves h (as `other`) ...
  h.add_(x);   // ... which is then changed again
  REQUIRE_THROWS_WITH(h.sum().backward(),
                      Catch::StartsWith("one of the variables needed for gradient computation has been modified by an "
                                        "inplace operation: [torch.FloatTensor [3]], which is output 0 of "
                                        "AddBackward0, is at version 2; expected version 0 instead."));
}

TEST_CASE("in-place ops on a leaf that requires grad are refused", "[autograd][version]") {
  Tensor w = leaf({1.0, 2.0});
  REQUIRE_THROWS_AS(w.add_(1.0), ember::AutogradError);
  REQUIRE_THROWS_WITH(w.mul_(2.0), "a leaf Variable that requires grad is being used in an in-place operation.");
  REQUIRE_THROWS_WITH(w += ember::tensor({1.0, 1.0}),
                      "a leaf Variable that requires grad is being used in an in-place operation.");
  {
    ember::NoGradGuard no_grad;  // what an optimizer step does
    w -= ember::tensor({0.5, 0.5});
  }
  REQUIRE(to_vector(w) == std::vector<double>{0.5, 1.5});
  REQUIRE(w.version() == 1);
}

TEST_CASE("in-place ops on non-leaves are recorded", "[autograd][inplace]") {
  Tensor x = leaf({1.0, 2.0, 3.0});
  Tensor h = x * 2;
  h.mul_(3.0);
  h.add_(x);
  REQUIRE(h.grad_fn()->name() == reference()["inplace_grad_fn"].get<std::string>());
  h.sum().backward();
  require_matches(x.grad(), "inplace_history");

  Tensor source = leaf({1.0, 2.0});
  Tensor buffer = ember::zeros({2}) * 1.0;
  buffer.copy_(source * 3);
  REQUIRE(buffer.requires_grad());
  buffer.sum().backward();
  require_matches(source.grad(), "copy_grad");
}

// In-place ops on views (CopySlices, rebuilt view histories, and the cases PyTorch refuses)
// are tested in test_view_inplace.cpp.

TEST_CASE("graph nodes have PyTorch's names and edges", "[autograd][tape]") {
  Tensor x1 = ember::tensor({1.1});
  Tensor w1 = leaf({2.2});
  Tensor b = leaf({0.0});
  Tensor z = x1 * w1 + b;
  auto add = std::static_pointer_cast<ember::autograd::Node>(z.grad_fn());
  REQUIRE(add->name() == "AddBackward0");
  REQUIRE(add->next_edges().size() == 2);
  REQUIRE(add->next_edges()[0].node->name() == "MulBackward0");
  REQUIRE(add->next_edges()[1].node->name() == "AccumulateGrad");
  auto mul = add->next_edges()[0].node;
  REQUIRE_FALSE(mul->next_edges()[0].is_valid());  // x1 needs no gradient
  REQUIRE(mul->saved_tensors().size() == 2);
  // The same leaf has the same accumulator in every graph.
  Tensor other = w1 * 2;
  auto other_mul = std::static_pointer_cast<ember::autograd::Node>(other.grad_fn());
  REQUIRE(other_mul->next_edges()[0].node == mul->next_edges()[1].node);
}

TEST_CASE("saved tensors share data with the forward tensors", "[autograd][tape]") {
  Tensor a = leaf({1.0, 2.0});
  Tensor b = leaf({3.0, 4.0});
  Tensor c = a * b;
  auto node = std::static_pointer_cast<ember::autograd::Node>(c.grad_fn());
  REQUIRE(node->saved_tensors()[0].peek().data_ptr() == a.data_ptr());
  REQUIRE(node->saved_tensors()[1].peek().data_ptr() == b.data_ptr());
  c.sum().backward();
  REQUIRE(node->saved_tensors()[0].was_released());  // freed after backward
}

// Issue 18, item 6: validate_gradient checked a returned gradient's shape and dtype but not
// its device. The device rule is factored out so it can be shown without a GPU: PyTorch's
// message for a wrong-device gradient, and its exception for a 0-d one (moved, not refused).
TEST_CASE("a backward formula's gradient on the wrong device is refused with PyTorch's message",
          "[autograd][engine][device]") {
  using ember::Device;
  using ember::autograd::gradient_needs_device_move;
  CHECK_FALSE(gradient_needs_device_move("MulBackward0", 0, Device("cpu"), Device("cpu"), 2));
  CHECK_FALSE(gradient_needs_device_move("MulBackward0", 0, Device("cuda:1"), Device("cuda:1"), 2));
  CHECK_THROWS_AS(gradient_needs_device_move("MulBackward0", 0, Device("cpu"), Device("cuda:0"), 1),
                  ember::DeviceError);
  CHECK_THROWS_WITH(gradient_needs_device_move("MulBackward0", 0, Device("cpu"), Device("cuda:0"), 1),
                    "Function MulBackward0 returned an invalid gradient at index 0 - expected device cpu but got cuda:0");
  CHECK_THROWS_WITH(gradient_needs_device_move("AddmmBackward0", 2, Device("cuda:1"), Device("cuda:0"), 2),
                    "Function AddmmBackward0 returned an invalid gradient at index 2 - expected device cuda:1 but got "
                    "cuda:0");
  // PyTorch moves a 0-d gradient to its input's device rather than refusing it.
  CHECK(gradient_needs_device_move("SumBackward0", 0, Device("cuda:0"), Device("cpu"), 0));
}
