// tests/autograd/test_deep_graph.cpp — graphs a million nodes deep. Destroying the output
// of a long chain used to free the nodes recursively (each node's edge released the one
// before it from inside its destructor) and overflowed the stack near 60 000 ops;
// autograd::grad overflowed in a recursive walk near 200 000. PyTorch handles both, and so
// must ember: nodes are freed (autograd/node.cpp) and graphs walked (engine.cpp,
// graph_inspector.cpp) with explicit stacks. Each test builds its chain once; a million
// ops take about 1.5 s of CPU in a Release build.
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <string>

#include <ember/ember.h>

#include "test_support.h"

using ember::Tensor;

namespace {

constexpr std::int64_t kDepth = 1'000'000;

// x + 1 + 1 + ... (depth adds): a chain of `depth` AddBackward0 nodes. The 1 is one 0-d
// tensor made once (it needs no gradient, so the formula costs the engine nothing). float32
// counts exactly up to 2^24, so the value is exact.
Tensor add_chain(const Tensor& x, std::int64_t depth) {
  const Tensor one = ember::tensor(1.0);
  Tensor y = x;
  for (std::int64_t i = 0; i < depth; ++i) y = y + one;
  return y;
}

}  // namespace

TEST_CASE("a million chained ops run grad and backward and are freed without recursion", "[autograd][deep]") {
  Tensor x = ember::zeros({1}).requires_grad_();
  Tensor first = x + 1.0;
  std::weak_ptr<ember::GradFn> first_node = first.grad_fn();
  Tensor y = add_chain(first, kDepth);
  first = Tensor();
  REQUIRE(y.item<double>() == static_cast<double>(kDepth + 1));
  // autograd::grad walks the graph to find which nodes lead to x (mark_needed).
  auto grads = ember::autograd::grad({y}, {x}, {}, /*retain_graph=*/true);
  REQUIRE(grads[0].item<double>() == 1.0);
  REQUIRE_FALSE(x.grad().defined());
  y.backward();
  REQUIRE(x.grad().item<double>() == 1.0);
  REQUIRE_FALSE(first_node.expired());  // y's chain still holds the first node
  y = Tensor();                         // a million nodes die here
  REQUIRE(first_node.expired());
}

TEST_CASE("a chain of a million multiplications (saved inputs) is freed without recursion", "[autograd][deep]") {
  // mul saves its operands: node k holds y_(k-1), whose grad_fn is node k-1, so the chain
  // is linked through saved tensors as well as through edges.
  Tensor w = ember::ones({1}).requires_grad_();
  Tensor y = w * 1.0;
  std::weak_ptr<ember::GradFn> first_node = y.grad_fn();
  for (std::int64_t i = 0; i < kDepth; ++i) y = y * w;
  REQUIRE(y.item<double>() == 1.0);
  y = Tensor();
  REQUIRE(first_node.expired());
}

TEST_CASE("the graph inspector walks a deep graph without recursion", "[autograd][deep][inspector]") {
  // dump() prints one line per node (with indentation capped), to_dot a box and an edge per
  // node. 100 000 nodes are far past what a recursive walk survives.
  constexpr std::int64_t depth = 100'000;
  Tensor x = ember::zeros({1}).requires_grad_();
  Tensor y = add_chain(x, depth);
  std::string tree = ember::autograd::dump(y);
  REQUIRE(std::count(tree.begin(), tree.end(), '\n') == depth + 1);  // the adds and x's AccumulateGrad
  REQUIRE(tree.size() < static_cast<std::size_t>(depth) * 200);      // indentation stays bounded
  std::string dot = ember::autograd::to_dot(y);
  REQUIRE(dot.find("leaf [1] float32") != std::string::npos);
}
