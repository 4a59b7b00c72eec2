// tests/autograd/test_topk.cpp — ember::topk's gradient and graph node against PyTorch.
//
// tests/reference/gen_sampling.py recorded d/dx sum(topk(x).values * w) and the node name
// (sampling.json, "topk_grads"); the gradient is w scattered to the chosen indices, so it is
// compared exactly. gradcheck/gradgradcheck rows are in gradcheck_cases.h; here also 3-d,
// 0-d and non-contiguous inputs, and the indices output staying out of the graph.
#include <catch2/catch.hpp>

#include <ember/autograd/gradcheck.h>
#include <ember/core/native.h>
#include <ember/ember.h>
#include <test_support.h>

using namespace ember;
using ember::autograd::TensorList;

TEST_CASE("topk's gradient goes to the chosen indices, as in PyTorch", "[autograd][topk]") {
  const auto data = testing::load_reference("sampling.json");
  int count = 0;
  for (const auto& c : data["topk_grads"]) {
    Tensor x = testing::tensor_from_json(c["input"]).requires_grad_(true);
    auto [values, indices] = ember::topk(x, c["k"], c["dim"], c["largest"]);
    REQUIRE(values.grad_fn()->name() == c["node"].get<std::string>());
    REQUIRE_FALSE(indices.requires_grad());
    (values * testing::tensor_from_json(c["weight"])).sum().backward();
    REQUIRE(native::equal(x.grad(), testing::tensor_from_json(c["grad"])));
    ++count;
  }
  REQUIRE(count == 4);
}

TEST_CASE("Tensor::topk is ember::topk", "[autograd][topk]") {
  Tensor x = tensor({{3.0, 1.0, 4.0}, {1.0, 5.0, 9.0}});
  auto [v1, i1] = x.topk(2);
  auto [v2, i2] = ember::topk(x, 2, -1, true, true);
  REQUIRE(native::equal(v1, v2));
  REQUIRE(native::equal(i1, i2));
  REQUIRE(native::equal(v1, tensor({{4.0, 3.0}, {9.0, 5.0}}).to(kFloat32)));
}

TEST_CASE("topk passes gradcheck on 3-d, 0-d and non-contiguous inputs", "[autograd][topk][gradcheck]") {
  // Distinct values (a permutation scaled), so no tie sits on a finite-difference step.
  Tensor base = (randperm(24).to(kFloat64) * 0.37).view({2, 3, 4});
  for (std::int64_t dim : {0, 1, 2}) {
    for (bool largest : {true, false}) {
      INFO("dim " << dim << " largest " << largest);
      Tensor x = base.detach().requires_grad_(true);
      auto fn = [dim, largest](const TensorList& in) { return std::get<0>(ember::topk(in[0], 2, dim, largest, true)); };
      REQUIRE(ember::autograd::gradcheck(fn, {x}));
      REQUIRE(ember::autograd::gradgradcheck(fn, {x}));
    }
  }
  Tensor transposed = base.view({6, 4}).t().detach().requires_grad_(true);  // [4, 6], strides (1, 4)
  auto along_rows = [](const TensorList& in) { return std::get<0>(ember::topk(in[0], 3, 1, true, false)); };
  REQUIRE(ember::autograd::gradcheck(along_rows, {transposed}));
  Tensor scalar = tensor(2.5).to(kFloat64).requires_grad_(true);
  auto of_scalar = [](const TensorList& in) { return std::get<0>(ember::topk(in[0], 1)); };
  REQUIRE(ember::autograd::gradcheck(of_scalar, {scalar}));
  Tensor values = std::get<0>(ember::topk(scalar, 1));
  REQUIRE(values.dim() == 0);
  values.backward();
  REQUIRE(scalar.grad().item<double>() == 1.0);
}
