// tests/autograd/test_fused_autograd.cpp — the fused ops as autograd sees them:
// cross_entropy on [N, C] logits (one NllLossBackward0 node over the fused kernel) and
// relu's backward (threshold_backward, ThresholdBackwardBackward0 under create_graph).
// Against PyTorch (tests/reference/fused.json, from gen_fused.py), against the composite
// log_softmax + nll_loss, through gradcheck and gradgradcheck in float64.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include <ember/autograd/fused_ops.h>
#include <ember/autograd/gradcheck.h>
#include <ember/core/kernel_mode.h>
#include <ember/ember.h>

#include "test_support.h"

namespace {

using namespace ember;
using ember::autograd::TensorList;
using nlohmann::json;
using testing::load_reference;
using testing::tensor_from_json;
using testing::to_vector;

Reduction reduction_named(const std::string& name) {
  return name == "mean" ? Reduction::Mean : name == "sum" ? Reduction::Sum : Reduction::None;
}

// |a - b| <= atol + rtol |b| everywhere, NaN matching NaN.
void require_close(const Tensor& actual, const Tensor& expected, double rtol = 1e-5, double atol = 1e-6) {
  REQUIRE(actual.sizes() == expected.sizes());
  const auto a = to_vector(actual), b = to_vector(expected);
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO("element " << i << ": ember " << a[i] << " vs " << b[i]);
    if (std::isnan(b[i])) {
      REQUIRE(std::isnan(a[i]));
    } else {
      REQUIRE(std::abs(a[i] - b[i]) <= atol + rtol * std::abs(b[i]));
    }
  }
}

// Deterministic logits in [-3, 3].
Tensor logits_of(const Shape& sizes, DType dtype, double phase) {
  Tensor values = empty(sizes, TensorOptions().dtype(kFloat64));
  for (std::int64_t i = 0; i < values.numel(); ++i)
    values.data_ptr<double>()[i] = 3.0 * std::sin(0.61 * static_cast<double>(i) + phase);
  return values.to(dtype);
}

Tensor targets_of(std::int64_t rows, std::int64_t classes, std::int64_t ignore_index) {
  Tensor t = empty({rows}, TensorOptions().dtype(kInt64));
  for (std::int64_t r = 0; r < rows; ++r) t.data_ptr<std::int64_t>()[r] = r % 4 == 2 ? ignore_index : (3 * r + 1) % classes;
  return t;
}

// The name of every node under `root`'s grad_fn, depth first, valid edges only.
void collect_names(const std::shared_ptr<autograd::Node>& node, std::vector<std::string>& names) {
  names.push_back(node->name());
  for (const auto& edge : node->next_edges())
    if (edge.is_valid()) collect_names(edge.node, names);
}

}  // namespace

TEST_CASE("fused cross_entropy matches PyTorch: losses, gradients, grad_fn", "[autograd][fused][cross_entropy]") {
  const json reference = load_reference("fused.json");  // outlives the loop
  for (const json& c : reference["cross_entropy"]) {
    INFO(c["name"].get<std::string>());
    Tensor base = tensor_from_json(c["logits"]).requires_grad_();
    Tensor logits = c["transpose"].get<bool>() ? base.t() : base;
    Tensor target = tensor_from_json(c["target"]);
    Tensor loss = ember::cross_entropy(logits, target, reduction_named(c["reduction"]),
                                       c["ignore_index"].get<std::int64_t>());
    REQUIRE(loss.grad_fn()->name() == c["grad_fn"].get<std::string>());
    require_close(loss, tensor_from_json(c["loss"]));
    loss.backward(tensor_from_json(c["grad_output"]).to(loss.dtype()));
    require_close(c["transpose"].get<bool>() ? base.grad().t() : base.grad(), tensor_from_json(c["grad"]));
  }
}

TEST_CASE("fused cross_entropy equals log_softmax + nll_loss", "[autograd][fused][cross_entropy]") {
  for (DType dtype : {kFloat32, kFloat64}) {
    for (Reduction reduction : {Reduction::Mean, Reduction::Sum, Reduction::None}) {
      for (std::int64_t classes : {1, 10, 257}) {
        INFO(dtype_name(dtype) << " reduction " << static_cast<int>(reduction) << " classes " << classes);
        const std::int64_t rows = 37;
        Tensor x_fused = logits_of({rows, classes}, dtype, 0.5).requires_grad_();
        Tensor x_composite = x_fused.detach().clone().requires_grad_();
        Tensor target = targets_of(rows, classes, -100);
        Tensor fused = ember::cross_entropy(x_fused, target, reduction);
        Tensor composite = ember::nll_loss(ember::log_softmax(x_composite, 1), target, reduction);
        REQUIRE(fused.equal(composite));  // the same float operations: bit for bit
        Tensor g = reduction == Reduction::None ? ember::linspace(-1.0, 2.0, rows).to(dtype) : ember::tensor(1.5).to(dtype);
        fused.backward(g);
        composite.backward(g);
        require_close(x_fused.grad(), x_composite.grad(), dtype == kFloat32 ? 1e-5 : 1e-12, dtype == kFloat32 ? 1e-7 : 1e-15);
      }
    }
  }
}

TEST_CASE("fused cross_entropy under no_grad computes the loss only", "[autograd][fused][cross_entropy]") {
  Tensor x = logits_of({5, 4}, kFloat32, 0.1).requires_grad_();
  Tensor target = targets_of(5, 4, -100);
  Tensor with_graph = ember::cross_entropy(x, target);
  NoGradGuard no_grad;
  Tensor without = ember::cross_entropy(x, target);
  REQUIRE_FALSE(without.requires_grad());
  REQUIRE(without.equal(with_graph.detach()));
}

TEST_CASE("fused cross_entropy passes gradcheck and gradgradcheck", "[autograd][fused][cross_entropy][gradcheck]") {
  for (Reduction reduction : {Reduction::Mean, Reduction::Sum, Reduction::None}) {
    for (std::int64_t ignore_index : {std::int64_t{-100}, std::int64_t{1}}) {
      for (bool transposed : {false, true}) {
        INFO("reduction " << static_cast<int>(reduction) << " ignore_index " << ignore_index << " transposed "
                          << transposed);
        Tensor base = transposed ? logits_of({4, 5}, kFloat64, 1.0) : logits_of({5, 4}, kFloat64, 1.0);
        base.requires_grad_();
        Tensor target = targets_of(5, 4, ignore_index);
        auto fn = [&](const TensorList& x) {
          return ember::cross_entropy(transposed ? x[0].t() : x[0], target, reduction, ignore_index);
        };
        REQUIRE(autograd::gradcheck(fn, {base}));
        REQUIRE(autograd::gradgradcheck(fn, {base}));
      }
    }
  }
}

TEST_CASE("fused cross_entropy's double backward matches PyTorch", "[autograd][fused][cross_entropy][higher-order]") {
  const json reference = load_reference("fused.json")["cross_entropy_double_backward"];
  Tensor w = tensor_from_json(reference["w"]);
  Tensor target = ember::tensor({2, -100, 0});
  for (const auto& [name, c] : reference["cases"].items()) {
    INFO(name);
    Tensor x = tensor_from_json(reference["x"]).requires_grad_();
    Tensor loss = ember::cross_entropy(x, target, reduction_named(name));
    TensorList g = autograd::grad({loss}, {x}, {tensor_from_json(c["grad_output"])}, std::nullopt, /*create_graph=*/true);
    require_close(g[0], tensor_from_json(c["grad"]), 1e-12, 1e-14);
    REQUIRE(g[0].requires_grad());
    TensorList h = autograd::grad({(g[0] * w).sum()}, {x});
    require_close(h[0], tensor_from_json(c["second"]), 1e-10, 1e-12);
  }
}

TEST_CASE("fused cross_entropy: one node, retain_graph replays the same gradient", "[autograd][fused][cross_entropy]") {
  KernelModeGuard fused(KernelMode::Fast);  // the fused path itself (EMBER_KERNELS=reference unfuses it)
  Tensor x = logits_of({3, 4}, kFloat32, 0.2).requires_grad_();
  Tensor hidden = x * 2.0;
  Tensor loss = ember::cross_entropy(hidden, ember::tensor({0, 3, 1}));
  std::vector<std::string> names;
  collect_names(std::static_pointer_cast<autograd::Node>(loss.grad_fn()), names);
  REQUIRE(names == std::vector<std::string>{"NllLossBackward0", "MulBackward0", "AccumulateGrad"});
  loss.backward(Tensor(), /*retain_graph=*/true);
  Tensor first = x.grad().clone();
  loss.backward();  // the saved gradient must not have been modified by the first pass
  require_close(x.grad(), first * 2.0, 0, 0);
  // A leaf's .grad is never the saved buffer itself (later accumulation would corrupt it).
  Tensor leaf = logits_of({2, 3}, kFloat32, 0.7).requires_grad_();
  Tensor leaf_loss = ember::cross_entropy(leaf, ember::tensor({1, 2}));
  leaf_loss.backward(Tensor(), true);
  Tensor once = leaf.grad().clone();
  leaf_loss.backward(Tensor(), true);
  leaf_loss.backward();
  require_close(leaf.grad(), once * 3.0, 1e-6, 0);
}

TEST_CASE("fused cross_entropy keeps PyTorch's error messages", "[autograd][fused][cross_entropy][errors]") {
  const json errors = load_reference("fused.json")["cross_entropy_errors"];
  Tensor logits = ember::zeros({3, 4}).requires_grad_();
  REQUIRE_THROWS_WITH(ember::cross_entropy(logits, ember::tensor({1, 7, 0})), errors["out of bounds"].get<std::string>());
  REQUIRE_THROWS_AS(ember::cross_entropy(logits, ember::tensor({1, 7, 0})), IndexError);
  REQUIRE_THROWS_WITH(ember::cross_entropy(logits, ember::tensor({1, -3, 0})), errors["negative target"].get<std::string>());
  REQUIRE_THROWS_WITH(ember::cross_entropy(logits, ember::tensor({1, 2, 0}).to(kInt32)),
                      errors["int32 target"].get<std::string>());
  REQUIRE_THROWS_AS(ember::cross_entropy(logits, ember::tensor({1, 2, 0}).to(kInt32)), DTypeError);
  REQUIRE_THROWS_WITH(ember::cross_entropy(logits, ember::tensor({1, 2})), errors["batch mismatch"].get<std::string>());
  REQUIRE_THROWS_AS(ember::cross_entropy(logits, ember::tensor({1, 2})), ShapeError);
}

TEST_CASE("relu's backward is threshold_backward, as in PyTorch", "[autograd][fused][relu]") {
  // NaN results pass the gradient, zeros (and negatives) stop it.
  Tensor x = ember::tensor({NAN, 0.0, -1.0, 2.0, INFINITY}).requires_grad_();
  x.relu().backward(ember::tensor({1.0, 1.0, -1.0, 1.0, NAN}));
  require_close(x.grad(), ember::tensor({1.0, 0.0, 0.0, 1.0, NAN}), 0, 0);

  const json reference = load_reference("fused.json")["relu_double_backward"];
  Tensor input = tensor_from_json(reference["x"]).requires_grad_();
  Tensor v = tensor_from_json(reference["v"]).requires_grad_();
  TensorList g = autograd::grad({input.relu()}, {input}, {v}, std::nullopt, /*create_graph=*/true);
  require_close(g[0], tensor_from_json(reference["grad"]), 0, 0);
  auto node = std::static_pointer_cast<autograd::Node>(g[0].grad_fn());
  REQUIRE(node->name() == reference["grad_fn"].get<std::string>());
  std::vector<std::string> next;
  for (const auto& edge : node->next_edges()) next.push_back(edge.is_valid() ? edge.node->name() : "None");
  REQUIRE(next == reference["next"].get<std::vector<std::string>>());
  TensorList gv = autograd::grad({(g[0] * g[0]).sum()}, {v});
  require_close(gv[0], tensor_from_json(reference["grad_of_sum_grad_squared_wrt_v"]), 0, 0);
}

TEST_CASE("relu passes gradcheck and gradgradcheck on every layout", "[autograd][fused][relu][gradcheck]") {
  auto relu = [](const TensorList& x) { return x[0].relu(); };
  Tensor wide = logits_of({3, 8}, kFloat64, 0.3);
  Tensor strided = wide.slice(1, 0, std::nullopt, 2).detach().requires_grad_();  // non-contiguous leaf
  Tensor transposed = logits_of({4, 3}, kFloat64, 0.9).t().detach().requires_grad_();
  for (const Tensor& x : {logits_of({2, 3}, kFloat64, 0.1).requires_grad_(), strided, transposed,
                          ember::tensor(0.75, ember::kFloat64).requires_grad_(),
                          ember::zeros({0, 3}, ember::kFloat64).requires_grad_()}) {
    INFO("shape " << shape_to_string(x.sizes()) << (x.is_contiguous() ? "" : " non-contiguous"));
    REQUIRE(autograd::gradcheck(relu, {x}));
    REQUIRE(autograd::gradgradcheck(relu, {x}));
  }
}

// Issue 18, item 6: relu_of_fresh (the Linear + ReLU fusion) used to return its result on
// a second Storage over fresh's bytes. These tests fail with that design: the two handles
// had separate version counters, and a result whose bytes a live `fresh` still held looked
// private to AccumulateGrad (storage use count 1), so it was stolen as a leaf's .grad.
TEST_CASE("relu_of_fresh shares fresh's storage object and version counter", "[autograd][fused][relu]") {
  Tensor fresh = ember::tensor({-1.0, 2.0, -3.0, 4.0});
  const std::uint64_t before = fresh.version();
  Tensor out = ember::relu_of_fresh(fresh);
  CHECK(to_vector(out) == std::vector<double>{0, 2, 0, 4});
  CHECK(out.storage() == fresh.storage());
  // The relu write completes fresh's op (uncounted, so the tape equals the unfused one);
  // any later in-place write, through either handle, is seen through both.
  CHECK(out.version() == before);
  out.add_(1.0);
  CHECK(fresh.version() == before + 1);
  CHECK(out.version() == before + 1);
  fresh.mul_(2.0);
  CHECK(out.version() == before + 2);
}

TEST_CASE("relu_of_fresh: a write through fresh is caught by ReluBackward0's saved result",
          "[autograd][fused][relu]") {
  Tensor x = ember::tensor({-1.0, 2.0, 3.0}, requires_grad());
  Tensor fresh = x * 2.0;  // MulBackward0 does not save its output
  Tensor out = ember::relu_of_fresh(fresh);  // ReluBackward0 saves out
  {
    NoGradGuard no_grad;
    fresh.mul_(3.0);  // the same bytes as out: before, counted on fresh's storage only
  }
  CHECK_THROWS_WITH(out.sum().backward(),
                    Catch::Contains("one of the variables needed for gradient computation has been modified by an "
                                    "inplace operation"));
}

TEST_CASE("relu_of_fresh: a result still shared with a live fresh is never stolen as .grad",
          "[autograd][fused][relu]") {
  Tensor fresh = ember::tensor({-1.0, 2.0, 3.0});
  Tensor leaf = ember::zeros({3}, requires_grad());
  // The hook's result is the engine's only handle on it, contiguous and like the leaf:
  // everything AccumulateGrad's stealing asks, except that its memory is fresh's too.
  leaf.register_hook([&fresh](const Tensor&) { return ember::relu_of_fresh(fresh); });
  (leaf * 1.0).sum().backward();
  REQUIRE(leaf.grad().defined());
  CHECK(to_vector(leaf.grad()) == std::vector<double>{0, 2, 3});
  fresh.fill_(9.0);  // the caller still owns fresh: writing it must not change .grad
  CHECK(to_vector(leaf.grad()) == std::vector<double>{0, 2, 3});
  CHECK(leaf.grad().data_ptr() != fresh.data_ptr());
}
