// tests/autograd/test_hooks_anomaly_inspector.cpp — tensor hooks, post-accumulate-grad
// hooks, anomaly mode, and the graph inspector (to_dot / dump).
#include <catch2/catch.hpp>

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
