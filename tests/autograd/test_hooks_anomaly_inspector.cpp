// tests/autograd/test_hooks_anomaly_inspector.cpp — tensor hooks, post-accumulate-grad
// hooks, anomaly mode, and the graph inspector (to_dot / dump).
#include <catch2/catch.hpp>

#include <cmath>

#include <ember/ember.h>

#include "test_support.h"

using ember::Tensor;
using ember::testing::load_reference;
using ember::testing::tensor_from_json;
using ember::testing::to_vector;

namespace {
void require_matches(const Tensor& actual, const std::string& key) {
  INFO(key);
  static const nlohmann::json reference = load_reference("autograd_engine.json");
  REQUIRE(actual.defined());
  REQUIRE(to_vector(actual) == to_vector(tensor_from_json(reference.at(key))));
}
}  // namespace

TEST_CASE("a hook on a non-leaf can replace its gradient", "[autograd][hooks]") {
  Tensor x = ember::tensor({1.0, -1.0, 2.0}, ember::requires_grad());
  Tensor h = x * x;
  int calls = 0;
  h.register_hook([&calls](const Tensor& g) {
    ++calls;
    return g * 2.0;
  });
  h.sum().backward();
  REQUIRE(calls == 1);
  require_matches(x.grad(), "hook_non_leaf");
}

TEST_CASE("a hook on a leaf runs before accumulation; an undefined result keeps the gradient",
          "[autograd][hooks]") {
  Tensor x = ember::tensor({1.0, -1.0, 2.0}, ember::requires_grad());
  Tensor seen;
  x.register_hook([&seen](const Tensor& g) {
    seen = g;
    return Tensor();  // observe only
  });
  x.register_hook([](const Tensor& g) { return g + 1.0; });
  (x * 3.0).sum().backward();
  REQUIRE(to_vector(seen) == std::vector<double>{3.0, 3.0, 3.0});
  require_matches(x.grad(), "hook_leaf");
  Tensor plain = ember::tensor({1.0});
  REQUIRE_THROWS_WITH(plain.register_hook([](const Tensor& g) { return g; }),
                      "cannot register a hook on a tensor that doesn't require gradient");
}

TEST_CASE("post-accumulate-grad hooks see the accumulated .grad", "[autograd][hooks]") {
  Tensor w = ember::tensor({1.0, 2.0}, ember::requires_grad());
  std::vector<double> observed;
  w.register_post_accumulate_grad_hook([&observed](const Tensor& leaf) { observed = to_vector(leaf.grad()); });
  (w * w).sum().backward();
  REQUIRE(observed == to_vector(w.grad()));
  REQUIRE(observed.size() == 2);
  Tensor h = w * 2.0;
  REQUIRE_THROWS_WITH(h.register_post_accumulate_grad_hook([](const Tensor&) {}),
                      "post accumulate grad hooks cannot be registered on non-leaf tensors");
}

TEST_CASE("anomaly mode names the node and the forward op that produced NaN", "[autograd][anomaly]") {
  Tensor x = ember::tensor({0.0, 1.0}, ember::requires_grad());
  {
    ember::autograd::DetectAnomalyGuard anomaly;
    REQUIRE(ember::autograd::is_anomaly_enabled());
    Tensor y = x.sqrt();  // d sqrt(x) at 0 = inf; times 0 (from the mul below) = nan
    Tensor loss = (y * ember::tensor({0.0, 1.0})).sum();
    REQUIRE_THROWS_AS(loss.backward(), ember::AutogradError);
    Tensor y2 = x.sqrt();
    Tensor loss2 = (y2 * ember::tensor({0.0, 1.0})).sum();
    REQUIRE_THROWS_WITH(loss2.backward(),
                        "Function 'SqrtBackward0' returned nan values in its 0th output. The node was created in "
                        "the forward pass by: sqrt(Tensor[2] float32)");
  }
  REQUIRE_FALSE(ember::autograd::is_anomaly_enabled());
  Tensor loss3 = (x.sqrt() * ember::tensor({0.0, 1.0})).sum();
  REQUIRE_NOTHROW(loss3.backward());  // off again: the NaN goes through silently
}

TEST_CASE("anomaly mode names the node and the forward op that produced an infinity", "[autograd][anomaly]") {
  // d sqrt(x) / dx = 1 / (2 sqrt(x)) is +inf at x = 0: no NaN anywhere, only the Inf branch.
  Tensor x = ember::tensor({0.0, 4.0}, ember::requires_grad());
  {
    ember::autograd::DetectAnomalyGuard anomaly;
    Tensor loss = x.sqrt().sum();
    REQUIRE_THROWS_WITH(loss.backward(),
                        "Function 'SqrtBackward0' returned inf values in its 0th output. The node was created in "
                        "the forward pass by: sqrt(Tensor[2] float32)");
    REQUIRE_FALSE(x.grad().defined());  // nothing reached the leaf
    // The other input of a two-input node: d(a / b) / db = -a / b² is -inf at b = 0; the
    // first gradient (1 / b = inf) is reported first, as the 0th output.
    Tensor a = ember::tensor({1.0}, ember::requires_grad());
    Tensor b = ember::tensor({0.0}, ember::requires_grad());
    Tensor quotient = (a / b).sum();
    REQUIRE_THROWS_WITH(quotient.backward(),
                        Catch::StartsWith("Function 'DivBackward0' returned inf values in its 0th output.") &&
                            Catch::EndsWith("div(Tensor[1] float32, Tensor[1] float32)"));
    // Only b requires grad: the -inf arrives as the 1th output.
    Tensor c = ember::tensor({1.0});
    Tensor quotient2 = (c / b).sum();
    REQUIRE_THROWS_WITH(quotient2.backward(), Catch::StartsWith("Function 'DivBackward0' returned inf values in its 1th output."));
  }
  // Anomaly mode off: the infinity flows into .grad silently, as PyTorch does.
  x.sqrt().sum().backward();
  REQUIRE(x.grad().defined());
  REQUIRE(std::isinf(to_vector(x.grad())[0]));
}

TEST_CASE("to_dot draws nodes, saved tensors and leaves", "[autograd][inspector]") {
  Tensor x1 = ember::tensor({1.1});
  Tensor w1 = ember::tensor({2.2}, ember::requires_grad());
  w1.set_name("w1");
  Tensor b = ember::tensor({0.0}, ember::requires_grad());
  Tensor loss = ember::binary_cross_entropy(ember::sigmoid(x1 * w1 + b), ember::tensor({1.0}));
  std::string dot = ember::autograd::to_dot(loss);
  REQUIRE(dot.rfind("digraph autograd {", 0) == 0);
  for (const char* piece : {"BinaryCrossEntropyBackward0", "SigmoidBackward0", "AddBackward0", "MulBackward0",
                            "w1 [1] float32", "leaf [1] float32", "self: [1] float32 strides [1] version 0",
                            "result (output): [1] float32"}) {
    INFO(piece);
    REQUIRE(dot.find(piece) != std::string::npos);
  }
  std::string text = ember::autograd::dump(loss);
  REQUIRE(text.rfind("BinaryCrossEntropyBackward0", 0) == 0);
  REQUIRE(text.find("└─ SigmoidBackward0") != std::string::npos);
  REQUIRE(text.find("AccumulateGrad (w1 [1] float32)") != std::string::npos);
  loss.backward();
  REQUIRE(ember::autograd::to_dot(loss).find("freed") != std::string::npos);
  REQUIRE(ember::autograd::dump(w1) == "leaf tensor (no grad_fn)\n");
}
