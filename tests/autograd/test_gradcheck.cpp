// tests/autograd/test_gradcheck.cpp — every differentiable op through gradcheck (first
// derivatives) and gradgradcheck (second derivatives), on contiguous, non-contiguous and
// broadcast inputs; plus gradcheck's own failure report.
// No reference file is needed: gradcheck compares the formulas with finite differences.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <string>

#include <ember/core/native.h>
#include <ember/ember.h>

#include "gradcheck_cases.h"

using ember::Shape;
using ember::Tensor;
using ember::autograd::TensorList;

namespace {

using namespace ember::testing::gradcheck_cases;

}  // namespace

TEST_CASE("gradcheck passes for every differentiable op", "[autograd][gradcheck]") {
  for (const OpCase& c : cases()) {
    for (bool non_contiguous : {false, true}) {
      INFO(c.name << (non_contiguous ? " (non-contiguous)" : ""));
      REQUIRE(ember::autograd::gradcheck(c.fn, make_inputs(c, non_contiguous)));
    }
  }
}

TEST_CASE("gradgradcheck passes for every differentiable op", "[autograd][gradcheck][higher-order]") {
  for (const OpCase& c : cases()) {
    if (!c.second_order) continue;
    for (bool non_contiguous : {false, true}) {
      INFO(c.name << (non_contiguous ? " (non-contiguous)" : ""));
      REQUIRE(ember::autograd::gradgradcheck(c.fn, make_inputs(c, non_contiguous)));
    }
  }
}

TEST_CASE("gradcheck passes for to(dtype) through float32 (ToCopyBackward0)", "[autograd][gradcheck]") {
  // float64 -> float32 -> float64 rounds to float32's 24 bits, so a central difference with
  // the default step (1e-6) would measure rounding; a step of 1e-3 makes that error ~1e-4.
  auto round_trip = [](const TensorList& x) { return (x[0].to(ember::kFloat32) * 2.0).to(ember::kFloat64) * x[1]; };
  for (bool non_contiguous : {false, true}) {
    INFO((non_contiguous ? "non-contiguous" : "contiguous"));
    TensorList inputs = {input({2, 3}, 1, false, non_contiguous), input({3}, 2, false, non_contiguous)};
    Tensor out = round_trip(inputs);
    REQUIRE(out.dtype() == ember::kFloat64);
    REQUIRE(out.grad_fn()->name() == "MulBackward0");
    REQUIRE(ember::autograd::gradcheck(round_trip, inputs, /*eps=*/1e-3, /*atol=*/1e-3, /*rtol=*/1e-3));
    REQUIRE(ember::autograd::gradgradcheck(round_trip, inputs, {}, /*eps=*/1e-3, /*atol=*/1e-3, /*rtol=*/1e-3));
  }
}

TEST_CASE("gradcheck reports a wrong formula with output, input and entries", "[autograd][gradcheck]") {
  // A hand-made node whose formula forgets the factor 2 of d(x²)/dx.
  auto square_with_bug = [](const TensorList& x) {
    Tensor out = ember::native::mul(x[0], x[0]);
    if (ember::autograd::needs_grad(x[0])) {
      auto node = ember::autograd::record("BuggySquareBackward", {x[0]}, out);
      node->save("self", x[0]);
      node->set_backward([](ember::autograd::Node& n, const TensorList& grads) -> TensorList {
        return {grads[0] * n.saved(0)};
      });
    }
    return out;
  };
  TensorList inputs = {input({3}, 1)};
  REQUIRE_FALSE(ember::autograd::gradcheck(square_with_bug, inputs, 1e-6, 1e-5, 1e-3, /*raise_exception=*/false));
  REQUIRE_THROWS_AS(ember::autograd::gradcheck(square_with_bug, inputs), ember::autograd::GradcheckError);
  REQUIRE_THROWS_WITH(ember::autograd::gradcheck(square_with_bug, inputs),
                      Catch::StartsWith("Jacobian mismatch for output 0 with respect to input 0,\nnumerical:") &&
                          Catch::Contains("3 mismatching entries") && Catch::Contains("d output[0] / d input[0]"));
}

TEST_CASE("gradcheck wants float64 inputs", "[autograd][gradcheck]") {
  Tensor x = ember::tensor({1.0, 2.0}, ember::requires_grad());  // float32
  REQUIRE_THROWS_WITH(ember::autograd::gradcheck([](const TensorList& v) { return v[0] * 2.0; }, {x}),
                      "gradcheck expects float64 inputs (input 0 is float32)");
}
