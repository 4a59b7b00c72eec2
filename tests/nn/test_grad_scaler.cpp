// tests/nn/test_grad_scaler.cpp — amp::GradScaler against torch.amp.GradScaler (issue 22).
//
// Reference: tests/reference/gen_grad_scaler.py (grad_scaler.json): a linear regression under
// float16 autocast, started with a scale of 2^24 so that its float16 gradients overflow. The
// first eight steps are skipped while the scale backs off to 2^16, then training proceeds and
// the scale grows every three good steps. ember must skip the same steps and hold the same
// scale at every step.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include <ember/ember.h>

#include "test_support.h"

using namespace ember;
using nlohmann::json;
namespace F = ember::nn::functional;

TEST_CASE("GradScaler: skipped steps, backoff and growth follow torch.amp.GradScaler", "[amp][grad_scaler]") {
  const json reference = testing::load_reference("grad_scaler.json");
  const Tensor x = testing::tensor_from_json(reference["x"]), y = testing::tensor_from_json(reference["y"]);
  Tensor w = testing::tensor_from_json(reference["initial"][0]).requires_grad_(true);
  Tensor b = testing::tensor_from_json(reference["initial"][1]).requires_grad_(true);
  optim::SGD optimizer({w, b}, {.lr = 0.05});
  amp::GradScaler scaler({.init_scale = 16777216.0, .growth_interval = 3});
  for (const json& expected : reference["steps"]) {
    INFO("step with scale " << expected["scale_before"].get<double>());
    Tensor loss;
    {
      AutocastGuard autocast(DeviceType::CPU, kFloat16);
      loss = ember::mse_loss(F::linear(x, w, b), y);
    }
    optimizer.zero_grad();
    CHECK(scaler.get_scale() == expected["scale_before"].get<double>());
    scaler.scale(loss).backward();
    scaler.unscale_(optimizer);
    // The unscaled gradient: NaN and inf where PyTorch's overflowed, else float16 products
    // divided by the scale (within float16's precision of PyTorch's).
    const std::vector<double> grad = testing::to_vector(w.grad());
    const json& want = expected["grad_w"]["data"];
    for (std::size_t i = 0; i < grad.size(); ++i) {
      if (want[i].is_string()) {
        CHECK_FALSE(std::isfinite(grad[i]));
      } else {
        CHECK(grad[i] == Approx(want[i].get<double>()).epsilon(2e-3).margin(1e-6));
      }
    }
    scaler.step(optimizer);
    scaler.update();
    CHECK(loss.item<double>() == Approx(expected["loss"].get<double>()).epsilon(1e-5));
    CHECK(scaler.get_scale() == expected["scale_after"].get<double>());
    CHECK(scaler.growth_tracker() == expected["growth_tracker"].get<std::int64_t>());
  }
  CHECK(w.allclose(testing::tensor_from_json(reference["final"][0]), 1e-3, 1e-5));
  CHECK(b.allclose(testing::tensor_from_json(reference["final"][1]), 1e-3, 1e-5));
}

TEST_CASE("GradScaler: misuse is an error, a disabled scaler is a no-op, the state round-trips", "[amp][grad_scaler]") {
  Tensor w = ember::ones({2}).requires_grad_(true);
  optim::SGD optimizer({w}, {.lr = 0.1});
  amp::GradScaler scaler;
  CHECK(scaler.get_scale() == 65536.0);  // PyTorch's default, 2^16
  scaler.scale((w * 2).sum()).backward();
  CHECK(testing::to_vector(w.grad()) == std::vector<double>{131072.0, 131072.0});
  scaler.unscale_(optimizer);
  CHECK(testing::to_vector(w.grad()) == std::vector<double>{2.0, 2.0});
  REQUIRE_THROWS_WITH(scaler.unscale_(optimizer), Catch::Contains("already been called on this optimizer"));
  CHECK(scaler.step(optimizer));
  REQUIRE_THROWS_WITH(scaler.step(optimizer), Catch::Contains("step() has already been called"));
  scaler.update();
  CHECK(scaler.growth_tracker() == 1);
  REQUIRE_THROWS_WITH(scaler.update(), Catch::Contains("No inf checks"));

  amp::GradScaler restored;
  restored.load_state_dict(scaler.state_dict());
  CHECK(restored.growth_tracker() == 1);
  CHECK(restored.get_scale() == scaler.get_scale());

  // A damaged state (a NaN scale would skip every step forever) is refused, naming the entry.
  optim::StateDict damaged = scaler.state_dict();
  damaged.insert("scale", ember::full({}, NAN, kFloat64));
  REQUIRE_THROWS_WITH(restored.load_state_dict(damaged), Catch::Contains("\"scale\" must be a positive finite"));
  damaged = scaler.state_dict();
  damaged.insert("_growth_tracker", ember::zeros({0}, kInt64));
  REQUIRE_THROWS_WITH(restored.load_state_dict(damaged), Catch::Contains("holds 0 values"));
  CHECK(restored.get_scale() == scaler.get_scale());  // unchanged by the refusals

  amp::GradScaler disabled({.enabled = false});
  const Tensor loss = (w * 3).sum();
  CHECK(disabled.scale(loss).item<double>() == loss.item<double>());
  CHECK(disabled.get_scale() == 1.0);
  REQUIRE_THROWS_AS(amp::GradScaler({.growth_factor = 0.5}), ValueError);
}

TEST_CASE("GradScaler: one NaN or inf in any gradient, of any dtype, skips the step", "[amp][grad_scaler]") {
  // unscale_ checks the gradients by groups of one dtype and device: a bad value in the
  // float64 group must be found as surely as one in the float32 group, a NaN as an inf.
  const double inf = std::numeric_limits<double>::infinity();
  for (double bad : {std::nan(""), inf, -inf}) {
    for (DType bad_dtype : {kFloat32, kFloat64}) {
      INFO(bad << " in the " << dtype_name(bad_dtype) << " gradient");
      Tensor a = ember::ones({3}).requires_grad_(true), b = ember::ones({2}, kFloat64).requires_grad_(true);
      Tensor c = ember::ones({4}).requires_grad_(true);
      optim::SGD optimizer({a, b, c}, {.lr = 0.5});
      amp::GradScaler scaler({.init_scale = 4.0});
      (a.sum() + b.sum() + c.sum()).backward();
      Tensor& bad_grad = bad_dtype == kFloat32 ? c.mutable_grad() : b.mutable_grad();
      bad_grad.select(0, 1).fill_(bad);
      scaler.unscale_(optimizer);
      CHECK(testing::to_vector(a.grad()) == std::vector<double>{0.25, 0.25, 0.25});  // still divided by the scale
      CHECK_FALSE(scaler.step(optimizer));
      CHECK(testing::to_vector(a) == std::vector<double>{1.0, 1.0, 1.0});  // skipped: unchanged
      scaler.update();
      CHECK(scaler.get_scale() == 2.0);  // backed off
    }
  }
  // All finite: the step runs.
  Tensor a = ember::ones({3}).requires_grad_(true), b = ember::ones({2}, kFloat64).requires_grad_(true);
  optim::SGD optimizer({a, b}, {.lr = 0.5});
  amp::GradScaler scaler({.init_scale = 4.0});
  scaler.scale(a.sum() + b.sum()).backward();
  CHECK(scaler.step(optimizer));
  CHECK(testing::to_vector(a) == std::vector<double>{0.5, 0.5, 0.5});
  CHECK(testing::to_vector(b) == std::vector<double>{0.5, 0.5});
}
