// tests/autograd/test_element_ops.cpp — the element ops added on the one-list path
// (core/op_list.h, issue 18): gelu (exact and tanh), silu, erf, rsqrt, tanh's backward
// kernel, masked_fill and clamp with tensor bounds, against PyTorch
// (tests/reference/gen_element_ops.py -> element_ops.json), with gradcheck and gradgradcheck
// in float64 on contiguous, strided, broadcast, empty and 0-d inputs.
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "test_support.h"

#include <ember/autograd/engine.h>
#include <ember/autograd/gradcheck.h>
#include <ember/autograd/node.h>
#include <ember/autograd/ops.h>
#include <ember/core/factories.h>
#include <ember/core/random.h>
#include <ember/nn/activation.h>
#include <ember/nn/functional.h>

namespace {

using namespace ember;
using namespace ember::testing;

// Bit for bit, NaN and the sign of zero included (exact ops: masked_fill, clamp, casts).
void require_same_bits(const Tensor& actual, const Tensor& expected, const std::string& what) {
  INFO(what);
  REQUIRE(actual.sizes() == expected.sizes());
  REQUIRE(actual.dtype() == expected.dtype());
  const std::vector<double> a = to_vector(actual), e = to_vector(expected);
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO("element " << i << ": ember " << a[i] << ", PyTorch " << e[i]);
    if (std::isnan(e[i])) {
      CHECK(std::isnan(a[i]));
    } else {
      CHECK(a[i] == e[i]);
      CHECK(std::signbit(a[i]) == std::signbit(e[i]));
    }
  }
}

// Within 16 machine epsilons of PyTorch (relative above 1, absolute below), NaN and ±inf
// exactly. Not bit for bit: PyTorch's CPU kernels are compiled with FMA contraction (so
// 1 - y·y rounds once where ember rounds twice, which matters most where it cancels), its
// float64 loops use SLEEF's erf/tanh from 8 elements on, and its float32 GELU runs oneDNN's
// polynomial (docs/reliability.md, "Known gaps").
void require_close(const Tensor& actual, const Tensor& expected, const std::string& what) {
  INFO(what);
  REQUIRE(actual.sizes() == expected.sizes());
  REQUIRE(actual.dtype() == expected.dtype());
  const double epsilon = actual.dtype() == kFloat32 ? 1.1920929e-07 : 2.220446049250313e-16;
  const std::vector<double> a = to_vector(actual), e = to_vector(expected);
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO("element " << i << ": ember " << a[i] << ", PyTorch " << e[i]);
    if (std::isnan(e[i]) || std::isinf(e[i])) {
      CHECK((std::isnan(e[i]) ? std::isnan(a[i]) : a[i] == e[i]));
    } else {
      CHECK(std::abs(a[i] - e[i]) <= 16 * epsilon * std::max(1.0, std::abs(e[i])));
    }
  }
}

Tensor run_op(const std::string& op, const Tensor& x) {
  static const std::map<std::string, std::function<Tensor(const Tensor&)>> ops{
      {"gelu", [](const Tensor& t) { return ember::gelu(t); }},
      {"gelu_tanh", [](const Tensor& t) { return ember::gelu(t, "tanh"); }},
      {"silu", [](const Tensor& t) { return ember::silu(t); }},
      {"erf", [](const Tensor& t) { return ember::erf(t); }},
      {"rsqrt", [](const Tensor& t) { return ember::rsqrt(t); }},
      {"tanh", [](const Tensor& t) { return ember::tanh(t); }},
      {"sigmoid", [](const Tensor& t) { return ember::sigmoid(t); }},
  };
  return ops.at(op)(x);
}

TEST_CASE("element ops: forward values and gradients equal PyTorch's within 16 epsilons", "[element_ops]") {
  const auto reference = load_reference("element_ops.json");
  for (const auto& c : reference["cases"]) {
    const std::string op = c["op"];
    Tensor x = tensor_from_json(c["input"]);
    const std::string what = op + " " + std::string(c["input"]["dtype"]);
    if (!c.contains("grad")) {  // integer input: computed in float32
      require_close(run_op(op, x), tensor_from_json(c["result"]), what);
      continue;
    }
    x.requires_grad_();
    Tensor out = run_op(op, x);
    require_close(out, tensor_from_json(c["result"]), what + " forward");
    REQUIRE(out.grad_fn()->name() == std::string(c["grad_fn"]));
    Tensor grad = autograd::grad({out}, {x}, {tensor_from_json(c["upstream"])})[0];
    require_close(grad, tensor_from_json(c["grad"]), what + " gradient");
  }
}

TEST_CASE("element ops: strided, broadcast-expanded and 0-d inputs give the contiguous values", "[element_ops]") {
  Tensor base = arange(-3.0, 3.0, 0.25, TensorOptions().dtype(kFloat32)).reshape({4, 6});
  for (const std::string op : {"gelu", "gelu_tanh", "silu", "erf", "rsqrt", "tanh"}) {
    INFO(op);
    Tensor transposed = base.t();
    require_same_bits(run_op(op, transposed), run_op(op, transposed.contiguous()), op + " transposed");
    Tensor expanded = base.select(0, 1).unsqueeze(0).expand({3, 6});
    require_same_bits(run_op(op, expanded), run_op(op, expanded.contiguous()), op + " expanded");
    Tensor scalar = full({}, 0.75);
    require_same_bits(run_op(op, scalar), run_op(op, full({1}, 0.75)).reshape({}), op + " 0-d");
    Tensor empty_input = empty({0, 3});
    CHECK(run_op(op, empty_input).sizes() == Shape{0, 3});
  }
}

TEST_CASE("element ops: gradcheck and gradgradcheck in float64", "[element_ops][gradcheck]") {
  auto options = TensorOptions().dtype(kFloat64);
  // Away from rsqrt's pole and the kinks of nothing: every op here is smooth.
  Tensor positive = (rand({3, 4}, options) + 0.5).t().requires_grad_();  // strided
  Tensor any = (randn({2, 5}, options) * 2.0).requires_grad_();
  for (const std::string op : {"gelu", "gelu_tanh", "silu", "erf", "tanh"}) {
    INFO(op);
    auto fn = [op](const autograd::TensorList& x) { return run_op(op, x[0]); };
    CHECK(autograd::gradcheck(fn, {any}));
    CHECK(autograd::gradgradcheck(fn, {any}));
    CHECK(autograd::gradcheck(fn, {positive}));
  }
  auto rsqrt_fn = [](const autograd::TensorList& x) { return ember::rsqrt(x[0]); };
  CHECK(autograd::gradcheck(rsqrt_fn, {positive}));
  CHECK(autograd::gradgradcheck(rsqrt_fn, {positive}));
}

TEST_CASE("element ops: backward of backward records PyTorch's nodes", "[element_ops]") {
  Tensor x = tensor({0.5, -1.0}, TensorOptions().dtype(kFloat64)).requires_grad_();
  const std::map<std::string, std::string> expected{{"gelu", "GeluBackwardBackward0"},
                                                    {"tanh", "TanhBackwardBackward0"},
                                                    {"silu", "SiluBackwardBackward0"}};
  for (const auto& [op, node] : expected) {
    Tensor grad = autograd::grad({run_op(op, x).sum()}, {x}, {}, /*retain_graph=*/std::nullopt, /*create_graph=*/true)[0];
    CHECK(grad.grad_fn()->name() == node);
  }
}

TEST_CASE("element ops: PyTorch's errors for integer inputs and a bad approximate", "[element_ops]") {
  const auto errors = load_reference("element_ops.json")["errors"];
  Tensor ints = tensor({1, 2});
  REQUIRE_THROWS_WITH(ember::gelu(ints), std::string(errors["gelu"]));
  REQUIRE_THROWS_WITH(ember::silu(ints), std::string(errors["silu"]));
  REQUIRE_THROWS_WITH(ember::gelu(ones({2}), "foo"), std::string(errors["gelu_approximate"]));
  REQUIRE_THROWS_WITH(nn::GELU("foo"), std::string(errors["gelu_approximate"]));
}

TEST_CASE("element ops: GELU and SiLU modules forward and print as PyTorch's", "[element_ops][nn]") {
  const auto repr = load_reference("element_ops.json")["repr"];
  Tensor x = tensor({-1.5, 0.25, 2.0});
  nn::GELU exact, approximate("tanh");
  nn::SiLU silu;
  CHECK(exact.forward(x).equal(ember::gelu(x)));
  CHECK(approximate.forward(x).equal(ember::gelu(x, "tanh")));
  CHECK(silu.forward(x).equal(nn::functional::silu(x)));
  CHECK(nn::functional::gelu(x, "tanh").equal(ember::gelu(x, "tanh")));
  std::ostringstream printed;
  printed << exact.repr() << "\n" << approximate.repr() << "\n" << silu.repr();
  CHECK(printed.str() == std::string(repr["gelu"]) + "\n" + std::string(repr["gelu_tanh"]) + "\n" +
                             std::string(repr["silu"]));
}

TEST_CASE("masked_fill: values, broadcast mask, dtype cast, gradients and errors as PyTorch", "[element_ops]") {
  const auto reference = load_reference("element_ops.json");
  const auto& m = reference["masked_fill"];
  Tensor self = tensor_from_json(m["self"]).requires_grad_();
  Tensor value = tensor_from_json(m["value"]).requires_grad_();
  Tensor out = self.masked_fill(tensor_from_json(m["mask"]), value);
  require_same_bits(out, tensor_from_json(m["result"]), "masked_fill");
  CHECK(out.grad_fn()->name() == "MaskedFillBackward0");
  auto grads = autograd::grad({out}, {self, value}, {arange(6.0).reshape({2, 3})});
  require_same_bits(grads[0], tensor_from_json(m["grad_self"]), "grad self");
  require_same_bits(grads[1], tensor_from_json(m["grad_value"]), "grad value");
  require_same_bits(tensor({1, 2, 3}).masked_fill(tensor({true, false, true}), 2.7), tensor_from_json(m["int_result"]),
                    "int64 masked_fill");
  // Strided self: same values as contiguous.
  Tensor wide = arange(12.0).reshape({3, 4}).t();
  Tensor mask = tensor({true, false, true});
  CHECK(wide.masked_fill(mask, -1.0).equal(wide.contiguous().masked_fill(mask, -1.0)));
  CHECK(empty({0, 3}).masked_fill(mask, 1.0).sizes() == Shape{0, 3});
  const auto& errors = reference["errors"];
  REQUIRE_THROWS_WITH(ones({3}).masked_fill(tensor({1, 0, 1}), 1.0), std::string(errors["masked_fill_mask"]));
  REQUIRE_THROWS_WITH(ones({3}).masked_fill(mask, tensor({1.0, 2.0})), std::string(errors["masked_fill_value"]));
  auto fn = [mask](const autograd::TensorList& x) { return x[0].masked_fill(mask, x[1]); };
  Tensor x64 = randn({2, 3}, TensorOptions().dtype(kFloat64)).requires_grad_();
  Tensor v64 = full({}, 0.5, TensorOptions().dtype(kFloat64)).requires_grad_();
  CHECK(autograd::gradcheck(fn, {x64, v64}));
}

TEST_CASE("clamp with tensor bounds: NaN, min > max, promotion and gradients as PyTorch", "[element_ops]") {
  const auto reference = load_reference("element_ops.json");
  const auto& c = reference["clamp"];
  Tensor x = tensor_from_json(c["x"]).requires_grad_();
  Tensor low = tensor_from_json(c["low"]).requires_grad_();
  Tensor high = tensor_from_json(c["high"]).requires_grad_();
  Tensor out = ember::clamp(x, low, high);
  require_same_bits(out, tensor_from_json(c["result"]), "clamp");
  CHECK(out.grad_fn()->name() == "ClampBackward0");
  auto grads = autograd::grad({out}, {x, low, high}, {arange(1.0, 8.0)});
  require_same_bits(grads[0], tensor_from_json(c["grad_x"]), "grad x");
  require_same_bits(grads[1], tensor_from_json(c["grad_low"]), "grad min");
  require_same_bits(grads[2], tensor_from_json(c["grad_high"]), "grad max");
  // A broadcast min only.
  Tensor x2 = tensor_from_json(c["x2"]).requires_grad_();
  Tensor row_low = tensor_from_json(c["row_low"]).requires_grad_();
  Tensor clamped = x2.clamp(row_low, std::nullopt);
  require_same_bits(clamped, tensor_from_json(c["result_min"]), "clamp min");
  auto grads2 = autograd::grad({clamped.sum()}, {x2, row_low});
  require_same_bits(grads2[0], tensor_from_json(c["grad_x2"]), "grad x2");
  require_same_bits(grads2[1], tensor_from_json(c["grad_row_low"]), "grad broadcast min");
  require_same_bits(ember::clamp(tensor({1, 5}), std::optional<Tensor>(tensor({2.5, 0.0})), std::nullopt),
                    tensor_from_json(c["int_result"]), "int64 clamped to float bounds");
  REQUIRE_THROWS_WITH(ember::clamp(ones({2}), std::optional<Tensor>(), std::optional<Tensor>()),
                      std::string(reference["errors"]["clamp_none"]));
  auto fn = [](const autograd::TensorList& t) { return ember::clamp(t[0], t[1], t[2]); };
  auto options = TensorOptions().dtype(kFloat64);
  // Bounds well away from x so finite differences never cross them.
  Tensor xs = tensor({-2.0, 0.5, 3.0, 1.25}, options).requires_grad_();
  Tensor lows = tensor({0.0, 0.0, 0.0, 0.0}, options).requires_grad_();
  Tensor highs = tensor({2.0, 2.0, 2.0, 2.0}, options).requires_grad_();
  CHECK(autograd::gradcheck(fn, {xs, lows, highs}));
}

}  // namespace
