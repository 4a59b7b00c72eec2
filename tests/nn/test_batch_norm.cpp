// tests/nn/test_batch_norm.cpp — nn::BatchNorm1d / BatchNorm2d and F::batch_norm (issue 19):
// values, running statistics and gradients against PyTorch (tests/reference/gen_batch_norm.py:
// train and eval, 1-d on [N, C] and [N, C, L], 2-d, channels-last and transposed inputs,
// batch 1 with H·W > 1, momentum None, no affine, no running statistics), gradcheck and
// gradgradcheck in float64, the fast kernels against the reference loops, the state_dict's
// names, a checkpoint round trip, to(), train()/eval() through a container, the repr and
// PyTorch's error messages.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <unistd.h>

#include <ember/autograd/gradcheck.h>
#include <ember/core/batch_norm.h>
#include <ember/core/kernel_mode.h>
#include <ember/ember.h>

#include "nn_test_helpers.h"

using namespace ember;
namespace F = ember::nn::functional;
using Catch::Matchers::Equals;
using ember::testing::load_reference;
using ember::testing::require_close;
using ember::testing::tensor_from_json;

namespace {

const nlohmann::json& reference() {
  static const nlohmann::json ref = load_reference("batch_norm.json");
  return ref;
}

std::shared_ptr<nn::BatchNormBase> make_module(const nlohmann::json& c, DType dtype) {
  const std::int64_t features = c["num_features"].get<std::int64_t>();
  std::optional<double> momentum;
  if (!c["momentum"].is_null()) momentum = c["momentum"].get<double>();
  const bool affine = c["affine"], track = c["track_running_stats"], bias = c["bias"];
  std::shared_ptr<nn::BatchNormBase> module;
  if (c["module"] == "BatchNorm2d") module = std::make_shared<nn::BatchNorm2d>(features, 1e-5, momentum, affine, track, bias);
  else module = std::make_shared<nn::BatchNorm1d>(features, 1e-5, momentum, affine, track, bias);
  module->to(dtype);
  if (affine) {
    NoGradGuard no_grad;
    module->weight.copy_(tensor_from_json(c["weight_init"]));
    if (bias) module->bias.copy_(tensor_from_json(c["bias_init"]));
  }
  return module;
}

// The stored input viewed as the case's layout says (gen_batch_norm.py, view_of).
Tensor view_of(const Tensor& stored, const std::string& layout) {
  if (layout == "channels_last") return stored.permute({0, 3, 1, 2});
  if (layout == "transposed") return stored.t();
  if (layout == "length_major") return stored.permute({0, 2, 1});
  return stored;
}

}  // namespace

TEST_CASE("BatchNorm1d/2d match PyTorch: outputs, running statistics, gradients, train and eval",
          "[nn][batch_norm]") {
  for (const auto& [name, c] : reference()["cases"].items()) {
    SECTION(name) {
      const Tensor x1_stored = tensor_from_json(c["x1"]);
      const bool float64 = x1_stored.dtype() == kFloat64;
      const double rtol = float64 ? 1e-10 : 1e-4, atol = float64 ? 1e-10 : 1e-5;
      auto module = make_module(c, x1_stored.dtype());
      const std::string layout = c["layout"];
      REQUIRE(module->repr() == c["repr"].get<std::string>());
      const Tensor grad = tensor_from_json(c["grad"]);

      Tensor x1 = view_of(x1_stored, layout).requires_grad_();
      if (layout != "contiguous") REQUIRE_FALSE(x1.is_contiguous());
      Tensor y1 = (*module)(x1);
      REQUIRE(y1.grad_fn()->name() == "NativeBatchNormBackward0");
      (y1 * grad).sum().backward();
      require_close(y1, c["y1"], rtol, atol);
      require_close(x1.grad(), c["grad_input"], rtol, atol);
      if (module->affine) {
        require_close(module->weight.grad(), c["grad_weight"], rtol, atol);
        if (module->bias.defined()) require_close(module->bias.grad(), c["grad_bias"], rtol, atol);
        module->zero_grad();
      } else {
        REQUIRE(module->parameters().empty());
      }
      if (module->track_running_stats) {
        require_close(module->running_mean, c["running_mean_1"], rtol, atol);
        require_close(module->running_var, c["running_var_1"], rtol, atol);
      }
      {
        NoGradGuard no_grad;
        require_close((*module)(view_of(tensor_from_json(c["x2"]), layout)), c["y2"], rtol, atol);
      }
      if (module->track_running_stats) {
        require_close(module->running_mean, c["running_mean"], rtol, atol);
        require_close(module->running_var, c["running_var"], rtol, atol);
        REQUIRE(module->num_batches_tracked.dtype() == kInt64);
        REQUIRE(module->num_batches_tracked.item<std::int64_t>() == c["num_batches_tracked"].get<std::int64_t>());
      }
      module->eval();
      Tensor x3 = view_of(tensor_from_json(c["x3"]), layout).requires_grad_();
      Tensor y_eval = (*module)(x3);
      (y_eval * grad).sum().backward();
      require_close(y_eval, c["y_eval"], rtol, atol);
      require_close(x3.grad(), c["grad_input_eval"], rtol, atol);
      if (module->affine) {
        require_close(module->weight.grad(), c["grad_weight_eval"], rtol, atol);
        if (module->bias.defined()) require_close(module->bias.grad(), c["grad_bias_eval"], rtol, atol);
      }
    }
  }
}

TEST_CASE("F::batch_norm passes gradcheck and gradgradcheck in float64", "[nn][batch_norm][gradcheck]") {
  manual_seed(5);
  for (bool training : {true, false}) {
    for (const Shape& shape : {Shape{3, 2, 2, 3}, Shape{4, 3}, Shape{2, 3, 4}}) {
      INFO("training " << training << ", input " << shape_to_string(shape));
      const std::int64_t channels = shape[1];
      // The input transposed in its first two dims: a non-contiguous layout.
      Shape swapped = shape;
      std::swap(swapped[0], swapped[1]);
      Tensor x = ember::randn(swapped, kFloat64).transpose(0, 1).requires_grad_();
      Tensor weight = (ember::rand({channels}, kFloat64) + 0.5).requires_grad_();
      Tensor bias = ember::randn({channels}, kFloat64).requires_grad_();
      Tensor running_mean = ember::randn({channels}, kFloat64);
      Tensor running_var = ember::rand({channels}, kFloat64) + 0.5;
      // The running statistics are left alone by the checks (they would drift with every
      // evaluation in training mode and are not differentiated): passed only in eval.
      auto fn = [&](const autograd::TensorList& in) {
        return F::batch_norm(in[0], training ? Tensor() : running_mean, training ? Tensor() : running_var, in[1], in[2],
                             training, 0.1, 1e-5);
      };
      REQUIRE(autograd::gradcheck(fn, {x, weight, bias}));
      REQUIRE(autograd::gradgradcheck(fn, {x, weight, bias}));
    }
  }
}

TEST_CASE("batch norm: the fast kernels equal the reference loops bit for bit", "[nn][batch_norm][reference]") {
  manual_seed(7);
  for (const Shape& shape : {Shape{5, 7, 3, 4}, Shape{9, 6}, Shape{4, 3, 11}, Shape{2, 40, 33, 33}}) {
    for (DType dtype : {kFloat32, kFloat64}) {
      INFO("input " << shape_to_string(shape) << " " << dtype_name(dtype));
      const std::int64_t channels = shape[1];
      Tensor x = ember::randn(shape, dtype) * 3.0 + 1.0;
      Tensor dy = ember::randn(shape, dtype);
      Tensor weight = ember::randn({channels}, dtype), bias = ember::randn({channels}, dtype);
      struct Run {
        native::BatchNormResult forward;
        native::BatchNormGradients backward, eval_backward;
        Tensor running_mean, running_var, eval_output;
      };
      auto run = [&](KernelMode mode) {
        KernelModeGuard guard(mode);
        Run r;
        r.running_mean = ember::zeros({channels}, dtype);
        r.running_var = ember::ones({channels}, dtype);
        r.forward = native::batch_norm(x, weight, bias, r.running_mean, r.running_var, true, 0.1, 1e-5);
        r.backward = native::batch_norm_backward(dy, x, weight, r.forward.save_mean, r.forward.save_invstd, true,
                                                 {true, true, true});
        native::BatchNormResult eval = native::batch_norm(x, weight, bias, r.running_mean, r.running_var, false, 0.1, 1e-5);
        r.eval_output = eval.output;
        r.eval_backward =
            native::batch_norm_backward(dy, x, weight, eval.save_mean, eval.save_invstd, false, {true, true, true});
        return r;
      };
      Run fast = run(KernelMode::Fast), plain = run(KernelMode::Reference);
      REQUIRE(fast.forward.output.equal(plain.forward.output));
      REQUIRE(fast.forward.save_mean.equal(plain.forward.save_mean));
      REQUIRE(fast.forward.save_invstd.equal(plain.forward.save_invstd));
      REQUIRE(fast.running_mean.equal(plain.running_mean));
      REQUIRE(fast.running_var.equal(plain.running_var));
      REQUIRE(fast.eval_output.equal(plain.eval_output));
      for (auto [a, b] : {std::pair{&fast.backward, &plain.backward}, std::pair{&fast.eval_backward, &plain.eval_backward}}) {
        REQUIRE(a->grad_input.equal(b->grad_input));
        REQUIRE(a->grad_weight.equal(b->grad_weight));
        REQUIRE(a->grad_bias.equal(b->grad_bias));
      }
    }
  }
}

TEST_CASE("BatchNorm2d: state_dict names, checkpoint round trip, to(), train()/eval() and repr",
          "[nn][batch_norm][serialize]") {
  const auto& reprs = reference()["reprs"];
  REQUIRE(nn::BatchNorm2d(32).repr() == reprs["bn2d_32"].get<std::string>());
  REQUIRE(nn::BatchNorm1d(3, 1e-3, std::nullopt, false, false).repr() == reprs["bn1d_custom"].get<std::string>());

  auto bn = std::make_shared<nn::BatchNorm2d>(3);
  auto model = nn::sequential({bn});
  std::vector<std::string> keys;
  for (const auto& [name, tensor] : model->state_dict()) keys.push_back(name);
  REQUIRE(keys == reference()["reprs"]["sequential_keys"].get<std::vector<std::string>>());
  REQUIRE(model->named_parameters().size() == 2);  // the buffers are not trained
  REQUIRE(bn->num_batches_tracked.dim() == 0);

  // Two training steps, then save; a fresh model loads the statistics and the counter.
  manual_seed(3);
  (*model)(ember::randn({4, 3, 2, 2}) * 2.0 + 1.0);
  (*model)(ember::randn({4, 3, 2, 2}) * 2.0 + 1.0);
  REQUIRE(bn->num_batches_tracked.item<std::int64_t>() == 2);
  model->eval();  // reaches the child, as for Dropout
  REQUIRE_FALSE(bn->is_training());
  Tensor probe = ember::randn({2, 3, 2, 2});
  Tensor expected = (*model)(probe);
  REQUIRE(bn->num_batches_tracked.item<std::int64_t>() == 2);  // eval does not count

  const auto path = std::filesystem::temp_directory_path() / ("ember_batch_norm_" + std::to_string(::getpid()) + ".safetensors");
  ember::save(model->state_dict(), path.string());
  const nn::StateDict loaded = ember::load(path.string());
  std::filesystem::remove(path);
  REQUIRE(loaded.find("0.num_batches_tracked")->dtype() == kInt64);
  auto fresh_bn = std::make_shared<nn::BatchNorm2d>(3);
  auto fresh = nn::sequential({fresh_bn});
  fresh->load_state_dict(loaded);
  fresh->eval();
  REQUIRE(fresh_bn->running_mean.equal(bn->running_mean));
  REQUIRE(fresh_bn->running_var.equal(bn->running_var));
  REQUIRE(fresh_bn->num_batches_tracked.item<std::int64_t>() == 2);
  REQUIRE((*fresh)(probe).equal(expected));

  // to(dtype) converts the floating buffers and keeps the counter int64; the module's
  // handles see the converted data.
  fresh->to(kFloat64);
  REQUIRE(fresh_bn->running_mean.dtype() == kFloat64);
  REQUIRE(fresh_bn->weight.dtype() == kFloat64);
  REQUIRE(fresh_bn->num_batches_tracked.dtype() == kInt64);
  require_close((*fresh)(probe.to(kFloat64)), nlohmann::json{{"shape", expected.sizes()},
                                                            {"dtype", "float32"},
                                                            {"data", ember::testing::to_vector(expected)}},
                1e-5, 1e-5);
}

TEST_CASE("batch norm errors carry PyTorch's messages", "[nn][batch_norm][errors]") {
  const auto& errors = reference()["errors"];
  auto message = [&](const char* name) { return errors[name].get<std::string>(); };
  REQUIRE_THROWS_AS(nn::BatchNorm1d(3)(ember::randn({1, 3})), ValueError);
  REQUIRE_THROWS_WITH(nn::BatchNorm1d(3)(ember::randn({1, 3})), Equals(message("batch1_1d")));
  REQUIRE_THROWS_WITH(nn::BatchNorm2d(3)(ember::randn({1, 3, 1, 1})), Equals(message("batch1_2d")));
  REQUIRE_THROWS_AS(nn::BatchNorm1d(3)(ember::randn({2, 3, 4, 5})), ValueError);
  REQUIRE_THROWS_WITH(nn::BatchNorm1d(3)(ember::randn({2, 3, 4, 5})), Equals(message("rank_1d")));
  REQUIRE_THROWS_WITH(nn::BatchNorm2d(3)(ember::randn({2, 3, 4})), Equals(message("rank_2d")));
  REQUIRE_THROWS_AS(nn::BatchNorm2d(4)(ember::randn({2, 3, 4, 4})), ShapeError);
  REQUIRE_THROWS_WITH(nn::BatchNorm2d(4)(ember::randn({2, 3, 4, 4})), Equals(message("running_mean_size")));
  REQUIRE_THROWS_WITH(F::batch_norm(ember::randn({2, 3}), ember::zeros({3}), ember::ones({4}), {}, {}, true),
                      Equals(message("running_var_size")));
  REQUIRE_THROWS_WITH(F::batch_norm(ember::randn({2, 3}), {}, {}, ember::ones({4}), {}, true),
                      Equals(message("weight_size")));
  REQUIRE_THROWS_WITH(F::batch_norm(ember::randn({2, 3}), {}, {}, {}, ember::ones({4}), true),
                      Equals(message("bias_size")));
  REQUIRE_THROWS_AS(F::batch_norm(ember::randn({2, 3}), {}, {}, {}, {}, false), ValueError);
  REQUIRE_THROWS_WITH(F::batch_norm(ember::randn({2, 3}), {}, {}, {}, {}, false), Equals(message("eval_without_stats")));
  Tensor long_input = ember::zeros({2, 3}, kInt64);
  REQUIRE_THROWS_AS(F::batch_norm(long_input, ember::zeros({3}), ember::ones({3}), {}, {}, true), DTypeError);
  REQUIRE_THROWS_WITH(F::batch_norm(long_input, ember::zeros({3}), ember::ones({3}), {}, {}, true),
                      Equals(message("long_input")));
  REQUIRE_THROWS_WITH(F::batch_norm(ember::randn({2, 3}), ember::zeros({3}, kFloat64), ember::ones({3}, kFloat64), {},
                                    {}, true),
                      Equals(message("mixed_float")));
  REQUIRE_THROWS_WITH(F::batch_norm(ember::randn({2, 3}, kFloat64), ember::zeros({3}), ember::ones({3}), {}, {}, true),
                      Equals(message("mixed_double")));
  REQUIRE_THROWS_WITH(F::batch_norm(ember::randn({2, 3}), {}, {}, {}, {}, true, 0.1, -1.0), Equals(message("eps_training")));
  REQUIRE_THROWS_WITH(F::batch_norm(ember::randn({2, 3}), ember::zeros({3}), ember::ones({3}), {}, {}, false, 0.1, -0.5),
                      Equals(message("eps_eval")));
}

TEST_CASE("batch norm on an empty batch leaves the running statistics alone", "[nn][batch_norm]") {
  // PyTorch: F.batch_norm(torch.randn(0, 3), rm, rv, training=True) returns an empty
  // tensor and rm, rv unchanged.
  Tensor running_mean = ember::full({3}, 2.0), running_var = ember::full({3}, 3.0);
  Tensor out = F::batch_norm(ember::randn({0, 3}), running_mean, running_var, {}, {}, true);
  REQUIRE(out.sizes() == Shape{0, 3});
  REQUIRE(running_mean.equal(ember::full({3}, 2.0)));
  REQUIRE(running_var.equal(ember::full({3}, 3.0)));
}

TEST_CASE("batch norm gives weight and bias gradients in their own shapes", "[nn][batch_norm]") {
  // F.batch_norm accepts any weight/bias with C elements (PyTorch checks numel); PyTorch's
  // own backward then fails ("TensorAccessor expected 1 dims but tensor has 2"); ember's
  // gradients take the parameters' shapes, which the engine checks.
  manual_seed(2);
  Tensor x = ember::randn({4, 3}).requires_grad_();
  Tensor weight = ember::randn({1, 3}).requires_grad_(), bias = ember::randn({3, 1}).requires_grad_();
  Tensor y = F::batch_norm(x, {}, {}, weight, bias, true);
  (y * ember::randn({4, 3})).sum().backward();
  REQUIRE(weight.grad().sizes() == Shape{1, 3});
  REQUIRE(bias.grad().sizes() == Shape{3, 1});
}
