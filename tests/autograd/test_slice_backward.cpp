// tests/autograd/test_slice_backward.cpp — select/slice/narrow backward write the gradient
// into zeros along the sliced positions: by a strided copy when no graph is recorded, by
// index_add (differentiable) under create_graph. Both give the same values, at every step and
// start, for contiguous and transposed inputs; -0.0 gradients stay -0.0 on the copy path, as
// PyTorch's slice_backward (a copy_) keeps them.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <vector>

#include <ember/ember.h>

#include "test_support.h"

using ember::Tensor;
using ember::autograd::TensorList;
using ember::testing::to_vector;

namespace {

// The weights w = 0, 1, 2, ... minus 2, shaped like `out`.
Tensor weights_like(const Tensor& out) {
  return ember::arange(out.numel()).to(ember::kFloat32).reshape(out.sizes()) - 2.0;
}

// d(sum(w * f(x)²) / 2)/dx, once without a graph and once with create_graph: the gradient
// reaching the view, w * f(x), then depends on x, so with create_graph it requires grad and
// the backward takes the differentiable path.
std::pair<Tensor, Tensor> both_paths(const Tensor& x, const std::function<Tensor(const Tensor&)>& f) {
  auto loss = [&](const Tensor& leaf) {
    Tensor out = f(leaf);
    return ember::sum(out * out * weights_like(out)) * 0.5;
  };
  Tensor leaf = x.detach().requires_grad_();
  Tensor plain = ember::autograd::grad({loss(leaf)}, {leaf})[0];
  Tensor graphed = ember::autograd::grad({loss(leaf)}, {leaf}, {}, std::nullopt, /*create_graph=*/true)[0];
  return {plain, graphed};
}

}  // namespace

TEST_CASE("slice, select and narrow backward: the copy path equals the index_add path") {
  Tensor base = ember::arange(24).to(ember::kFloat32).reshape({4, 6});
  const std::vector<std::function<Tensor(const Tensor&)>> views = {
      [](const Tensor& t) { return t.slice(1, 1, 6, 2); },
      [](const Tensor& t) { return t.slice(0, -3, std::nullopt, 1); },
      [](const Tensor& t) { return t.slice(1, 0, std::nullopt, 3); },
      [](const Tensor& t) { return t.select(1, -2); },
      [](const Tensor& t) { return t.narrow(0, 1, 2); },
      [](const Tensor& t) { return t.t().slice(0, 2, 5, 2); },  // a transposed input
  };
  for (std::size_t v = 0; v < views.size(); ++v) {
    INFO("view " << v);
    auto [plain, graphed] = both_paths(base, views[v]);
    CHECK(plain.sizes() == base.sizes());
    CHECK(to_vector(plain) == to_vector(graphed));
    CHECK_FALSE(plain.requires_grad());
    CHECK(graphed.requires_grad());
  }
  // Positions outside the slice get exactly zero; inside, the upstream gradient.
  Tensor leaf = base.detach().requires_grad_();
  Tensor out = leaf.slice(1, 1, 6, 2);
  ember::sum(out * weights_like(out)).backward();
  const std::vector<double> values = to_vector(leaf.grad());
  for (int row = 0; row < 4; ++row) {
    for (int column = 0; column < 6; ++column) {
      const double expected = column % 2 == 1 ? row * 3 + (column - 1) / 2 - 2.0 : 0.0;
      CHECK(values[static_cast<std::size_t>(row * 6 + column)] == expected);
    }
  }
}

TEST_CASE("slice backward keeps a -0.0 gradient without a graph, as PyTorch's copy does") {
  Tensor x = ember::zeros({3}).requires_grad_();
  Tensor y = x.slice(0, 1, 2);
  ember::sum(y * -0.0).backward();
  const std::vector<double> grad = to_vector(x.grad());
  CHECK(std::signbit(grad[1]));
  CHECK_FALSE(std::signbit(grad[0]));
}
