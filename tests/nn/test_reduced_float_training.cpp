// tests/nn/test_reduced_float_training.cpp — bfloat16 and float16 beyond single ops
// (issue 22): gradients through 16-bit tensors, and safetensors' BF16 and F16 entries.
//
// References: tests/reference/gen_reduced_float.py (reduced_float.json and
// reduced_float.safetensors, written by safetensors.torch) and gen_reduced_float_updates.py.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <ember/core/layer_norm.h>
#include <ember/ember.h>

#include "reduced_float_cases.h"
#include "test_support.h"

using namespace ember;
using nlohmann::json;
using testing::require_matches;

namespace {

const json& reference() { return testing::reduced_float_reference(); }

}  // namespace

TEST_CASE("16-bit floats: gradients flow through 16-bit ops in the leaf's dtype", "[reduced_float][autograd]") {
  for (const json& c : reference()["autograd"]) {
    Tensor x = testing::tensor_from_json(c["x"]).requires_grad_(true);
    Tensor w = testing::tensor_from_json(c["w"]).requires_grad_(true);
    INFO(dtype_name(x.dtype()));
    Tensor y = (ember::tanh(x * w) + x).sum();
    y.backward();
    // tanh's result, and its backward's 1 - tanh², come from the C library's tanhf here and
    // from PyTorch's vectorised one there: a unit of the 16-bit format apart at most.
    require_matches(y, testing::tensor_from_json(c["y"]), 1.0);
    require_matches(x.grad(), testing::tensor_from_json(c["x_grad"]), 1.0);
    require_matches(w.grad(), testing::tensor_from_json(c["w_grad"]), 1.0);
    // softmax and log_softmax: the backward formula in float32, rounded once (as PyTorch's
    // backward kernel); the exp and the sums differ from PyTorch's in float32's last bits.
    const Tensor upstream = testing::tensor_from_json(c["upstream"]);
    Tensor s = testing::tensor_from_json(c["softmax_input"]).requires_grad_(true);
    (ember::softmax(s, 1) * upstream).sum().backward();
    require_matches(s.grad(), testing::tensor_from_json(c["softmax_grad"]), 1.0);
    Tensor l = testing::tensor_from_json(c["softmax_input"]).requires_grad_(true);
    (ember::log_softmax(l, 1) * upstream).sum().backward();
    require_matches(l.grad(), testing::tensor_from_json(c["log_softmax_grad"]), 1.0);
  }
}

TEST_CASE("16-bit floats: a Linear layer's gradients in bfloat16 match float32's, rounded", "[reduced_float][autograd]") {
  manual_seed(22);
  const Tensor input32 = ember::randn({8, 16});
  const Tensor weight32 = ember::randn({4, 16}) * 0.25, bias32 = ember::randn({4});
  Tensor weight = weight32.to(kBFloat16).detach().requires_grad_(true);
  Tensor bias = bias32.to(kBFloat16).detach().requires_grad_(true);
  const Tensor input = input32.to(kBFloat16);
  ember::nn::functional::linear(input, weight, bias).sum().backward();
  REQUIRE(weight.grad().dtype() == kBFloat16);
  // The same computation in float32 on the same (rounded) values, rounded once at the end.
  Tensor weight_wide = weight.detach().to(kFloat32).requires_grad_(true);
  Tensor bias_wide = bias.detach().to(kFloat32).requires_grad_(true);
  ember::nn::functional::linear(input.to(kFloat32), weight_wide, bias_wide).sum().backward();
  require_matches(weight.grad(), weight_wide.grad().to(kBFloat16), 1.0);
  require_matches(bias.grad(), bias_wide.grad().to(kBFloat16), 0.0);
}

TEST_CASE("16-bit floats: safetensors BF16 and F16 written by safetensors.torch load exactly", "[reduced_float][serialize]") {
  const nn::StateDict loaded = load(std::string(EMBER_REFERENCE_DIR) + "/reduced_float.safetensors");
  for (const auto& [name, expected_json] : reference()["safetensors_file"].items()) {
    INFO(name);
    require_matches(loaded.at(name), testing::tensor_from_json(expected_json));
  }
  // And ember's own file of them reads back bit for bit.
  const nn::StateDict again = load_from_bytes(save_to_bytes(loaded));
  for (const auto& [name, tensor] : loaded) require_matches(again.at(name), tensor);
  // The header names the dtypes as the format does.
  const std::string bytes = save_to_bytes(loaded);
  CHECK(bytes.find("\"dtype\":\"BF16\"") != std::string::npos);
  CHECK(bytes.find("\"dtype\":\"F16\"") != std::string::npos);
}

// Every public op on 16-bit inputs either computes (a result of the input's dtype whose
// values are the float32 computation's, rounded) or refuses with a
// DTypeError naming the dtype: never a crash and never float32 bytes read as 16-bit ones.
// The list says which ops have 16-bit kernels today (issue 22 adds the rest).
TEST_CASE("16-bit floats: every op computes or refuses clearly", "[reduced_float]") {
  namespace F = ember::nn::functional;
  struct Case {
    const char* name;
    bool computes;  // false: refuses with "not implemented for '<dtype>'"
    std::function<Tensor(const Tensor&)> run;
  };
  const Tensor indices = ember::tensor({0, 2, 1});
  const std::vector<Case> cases = {
      {"add", true, [](const Tensor& x) { return x + x; }},
      {"mul scalar", true, [](const Tensor& x) { return x * 0.5; }},
      {"where", true, [](const Tensor& x) { return ember::where(x > 0, x, -x); }},
      {"sum", true, [](const Tensor& x) { return x.sum(); }},
      {"mean dim", true, [](const Tensor& x) { return x.mean({1}); }},
      {"max dim", true, [](const Tensor& x) { return std::get<0>(ember::max(x, 1)); }},
      {"matmul", true, [](const Tensor& x) { return ember::matmul(x, x.t()); }},
      {"linear", true, [](const Tensor& x) { return F::linear(x, x, x.select(1, 0)); }},
      {"transpose contiguous", true, [](const Tensor& x) { return x.t().contiguous(); }},
      {"reshape", true, [](const Tensor& x) { return x.t().reshape({-1}); }},
      {"clamp", true, [](const Tensor& x) { return ember::clamp(x, -0.5, 0.5); }},
      {"gelu", true, [](const Tensor& x) { return ember::gelu(x); }},
      {"mse_loss", true, [](const Tensor& x) { return ember::mse_loss(x, x * 0.5); }},
      {"softmax", true, [](const Tensor& x) { return ember::softmax(x, 1); }},
      {"log_softmax", true, [](const Tensor& x) { return ember::log_softmax(x, 1); }},
      {"cross_entropy", true, [&](const Tensor& x) { return ember::cross_entropy(x, indices); }},
      {"layer_norm", true, [](const Tensor& x) { return ember::layer_norm(x, {3}); }},
      {"batch_norm", true, [](const Tensor& x) {
         return ember::nn::functional::batch_norm(x, Tensor(), Tensor(), Tensor(), Tensor(), true);
       }},
      {"index_select", true, [&](const Tensor& x) { return ember::index_select(x, 1, indices); }},
      {"gather", true, [&](const Tensor& x) { return ember::gather(x, 1, indices.view({1, 3}).expand({3, 3}).contiguous()); }},
      {"embedding", true, [&](const Tensor& x) { return ember::embedding(x, indices); }},
      {"cat", true, [](const Tensor& x) { return ember::cat({x, x}); }},
      {"tril", true, [](const Tensor& x) { return ember::tril(x); }},
      {"masked_fill", true, [](const Tensor& x) { return ember::masked_fill(x, x > 0, 1.0); }},
      {"topk", true, [](const Tensor& x) { return std::get<0>(ember::topk(x, 2)); }},
      {"dropout", true, [](const Tensor& x) {
         manual_seed(22);  // the same mask for both dtypes
         return F::dropout(x, 0.5, true);
       }},
      {"conv2d", true, [](const Tensor& x) { return F::conv2d(x.view({1, 1, 3, 3}), x.view({1, 1, 3, 3})); }},
      {"max_pool2d", true, [](const Tensor& x) { return F::max_pool2d(x.view({1, 1, 3, 3}), 2); }},
      {"scaled_dot_product_attention", true, [](const Tensor& x) {
         return F::scaled_dot_product_attention(x.view({1, 3, 3}), x.view({1, 3, 3}), x.view({1, 3, 3}), Tensor(), 0.0, true);
       }},
      {"uniform_", true, [](const Tensor& x) {
         manual_seed(22);
         Tensor y = x.clone();
         ember::uniform_(y);
         return y;
       }},
      {"randn", true, [](const Tensor& x) {
         manual_seed(22);
         return ember::randn({2}, x.dtype());
       }},
      {"arange", true, [](const Tensor& x) { return ember::arange(0, 3, 1, x.dtype()); }},
  };
  for (DType dtype : {kBFloat16, kFloat16}) {
    const Tensor x = (ember::arange(9, kFloat32).view({3, 3}) / 8.0 - 0.5).to(dtype);
    for (const Case& c : cases) {
      INFO(c.name << " on " << dtype_name(dtype));
      if (c.computes) {
        // The float32 computation on the same values, rounded once: one unit apart at most, at
        // the inputs' scale (~1): composite ops (attention's math path under the reference
        // kernels) round their intermediate results too.
        const Tensor result = c.run(x);
        REQUIRE(result.dtype() == dtype);
        testing::require_matches_at_scale(result, c.run(x.to(kFloat32)).to(dtype), 1.0);
      } else {
        REQUIRE_THROWS_AS(c.run(x), DTypeError);
        REQUIRE_THROWS_WITH(c.run(x), Catch::Contains("'" + scalar_type_name(dtype) + "'"));
      }
    }
  }
}

TEST_CASE("16-bit floats: convolution, max pooling and fused attention match PyTorch's, with gradients",
          "[reduced_float][autograd]") {
  namespace F = ember::nn::functional;
  auto leaf = [](const json& value) { return testing::tensor_from_json(value).requires_grad_(true); };
  for (const json& c : reference()["layers"]) {
    auto check = [&](const Tensor& actual, const char* name) {
      INFO(name);
      require_matches(actual, testing::tensor_from_json(c[name]), 1.0);
    };
    Tensor image = leaf(c["image"]), kernel = leaf(c["kernel"]), kernel_bias = leaf(c["kernel_bias"]);
    INFO(dtype_name(image.dtype()));
    // The float32 kernels on widened values, rounded once; PyTorch's 16-bit kernels also
    // accumulate in float32, in another order: a unit of the format apart at most.
    const Tensor conv = F::conv2d(image, kernel, kernel_bias, 1, 1);
    check(conv, "conv");
    const Tensor pooled = F::max_pool2d(conv, 2);
    check(pooled, "pooled");
    (pooled * testing::tensor_from_json(c["pooled_upstream"])).sum().backward();
    // The input and weight gradients are sums of products of size ~1 that cancel, and
    // PyTorch's float16 convolution backward (oneDNN) rounds more than once on the way: they
    // are compared at the scale of their terms.
    testing::require_matches_at_scale(image.grad(), testing::tensor_from_json(c["image_grad"]), 1.0);
    testing::require_matches_at_scale(kernel.grad(), testing::tensor_from_json(c["kernel_grad"]), 1.0);
    check(kernel_bias.grad(), "kernel_bias_grad");

    // Attention: PyTorch's 16-bit CPU kernel rounds the probabilities to 16 bits before
    // multiplying them with v; ember keeps them in float32. The outputs and gradients are
    // weighted sums of values of size ~1 that can cancel, so they are compared at that scale.
    auto check_at_unit_scale = [&](const Tensor& actual, const char* name) {
      INFO(name);
      testing::require_matches_at_scale(actual, testing::tensor_from_json(c[name]), 1.0);
    };
    Tensor q = leaf(c["q"]), k = leaf(c["k"]), v = leaf(c["v"]);
    const Tensor attended = F::scaled_dot_product_attention(q, k, v, Tensor(), 0.0, /*is_causal=*/true);
    check_at_unit_scale(attended, "attended");
    (attended * testing::tensor_from_json(c["attended_upstream"])).sum().backward();
    check_at_unit_scale(q.grad(), "q_grad");
    check_at_unit_scale(k.grad(), "k_grad");
    check_at_unit_scale(v.grad(), "v_grad");
  }
}

TEST_CASE("16-bit floats: layer and batch norm match PyTorch's, with 16-bit or float32 parameters",
          "[reduced_float][autograd]") {
  // PyTorch computes both norms in float32 and rounds once; ember runs its float32 kernels on
  // widened values. Statistics and sums are float32 sums in another order: one unit of the
  // result's format apart at most (float32 results: a few float32 units). With float32
  // parameters ("mixed", autocast's case) the statistics and the parameters' gradients are
  // float32, the output and the input's gradient 16-bit.
  testing::on_both_paths([&] {
    for (const json& c : reference()["norms"]) {
      INFO(c["dtype"].get<std::string>() << (c["mixed"].get<bool>() ? ", float32 parameters" : ", 16-bit parameters"));
      auto expected = [&](const char* name) { return testing::tensor_from_json(c[name]); };
      auto check = [&](const Tensor& actual, const char* name) {
        INFO(name);
        const Tensor want = expected(name);
        REQUIRE(actual.dtype() == want.dtype());
        if (is_reduced_floating_point(want.dtype())) {
          // Gradients are sums of terms of size ~1 that cancel: compared at that scale.
          testing::require_matches_at_scale(actual, want, 1.0);
        } else {
          // float32 statistics and parameter gradients: float32 sums in another order.
          REQUIRE(actual.sizes() == want.sizes());
          const std::vector<double> got = testing::to_vector(actual), wanted = testing::to_vector(want);
          for (std::size_t i = 0; i < got.size(); ++i) {
            INFO("element " << i << ": got " << got[i] << ", want " << wanted[i]);
            REQUIRE(std::fabs(got[i] - wanted[i]) <= 1e-5 * std::max(1.0, std::fabs(wanted[i])));
          }
        }
      };
      auto leaf = [&](const char* name) { return expected(name).requires_grad_(true); };
      Tensor x = leaf("x"), weight = leaf("weight"), bias = leaf("bias");
      const auto [output, mean, rstd] =
          native::layer_norm(x.detach(), {8}, weight.detach(), bias.detach(), 1e-5);
      check(output, "layer_norm");
      check(mean, "layer_norm_mean");
      check(rstd, "layer_norm_rstd");
      ember::layer_norm(x, {8}, weight, bias).backward(expected("upstream"));
      check(x.grad(), "layer_norm_x_grad");
      check(weight.grad(), "layer_norm_weight_grad");
      check(bias.grad(), "layer_norm_bias_grad");

      namespace F = ember::nn::functional;
      Tensor x2 = leaf("x"), channel_weight = leaf("channel_weight"), channel_bias = leaf("channel_bias");
      Tensor running_mean = expected("running_mean"), running_var = expected("running_var");
      check(F::batch_norm(x2.detach(), running_mean, running_var, channel_weight.detach(), channel_bias.detach(),
                          /*training=*/false),
            "batch_norm_eval");
      const Tensor normalised =
          F::batch_norm(x2, running_mean, running_var, channel_weight, channel_bias, /*training=*/true);
      check(normalised, "batch_norm");
      check(running_mean, "running_mean_after");  // updated in place, in its own dtype
      check(running_var, "running_var_after");
      normalised.backward(expected("upstream"));
      check(x2.grad(), "batch_norm_x_grad");
      check(channel_weight.grad(), "batch_norm_weight_grad");
      check(channel_bias.grad(), "batch_norm_bias_grad");
    }
  });
}

TEST_CASE("16-bit floats: a norm's parameters share the input's dtype or are float32, with PyTorch's errors",
          "[reduced_float]") {
  const Tensor x = ember::ones({2, 4}, kBFloat16);
  auto layer_norm_with = [&](DType weight_dtype, DType bias_dtype) {
    return ember::layer_norm(x, {4}, ember::ones({4}, weight_dtype), ember::zeros({4}, bias_dtype));
  };
  CHECK(layer_norm_with(kBFloat16, kBFloat16).dtype() == kBFloat16);
  CHECK(layer_norm_with(kFloat32, kFloat32).dtype() == kBFloat16);
  CHECK_THROWS_WITH(layer_norm_with(kBFloat16, kFloat32), "expected scalar type BFloat16 but found Float");
  CHECK_THROWS_WITH(layer_norm_with(kFloat32, kBFloat16), "mixed dtype (CPU): expect parameter to have scalar type of Float");
  CHECK_THROWS_WITH(layer_norm_with(kFloat16, kFloat16), "mixed dtype (CPU): expect parameter to have scalar type of Float");
  CHECK_THROWS_WITH(ember::layer_norm(ember::ones({2, 4}, kFloat64), {4}, ember::ones({4}), Tensor()),
                    "mixed dtype (CPU): all inputs must share same datatype.");
  CHECK_THROWS_WITH(ember::layer_norm(ember::ones({2, 4}), {4}, ember::ones({4}, kBFloat16), Tensor()),
                    "mixed dtype (CPU): expect parameter to have scalar type of Float");
  // Batch norm: the first of weight, bias, running_mean, running_var decides.
  namespace F = ember::nn::functional;
  const Tensor images = ember::ones({2, 3, 2, 2}, kFloat16);
  CHECK(F::batch_norm(images, ember::zeros({3}), ember::ones({3}), Tensor(), Tensor(), true).dtype() == kFloat16);
  CHECK_THROWS_WITH(F::batch_norm(images, ember::zeros({3}), ember::ones({3}), ember::ones({3}, kFloat16), Tensor(), true),
                    "expected scalar type Half but found Float");
  CHECK_THROWS_WITH(F::batch_norm(images, ember::zeros({3}, kFloat16), ember::ones({3}, kFloat16), ember::ones({3}), Tensor(), true),
                    "mixed dtype (CPU): expect parameter to have scalar type of Float");
}

TEST_CASE("16-bit floats: an embedding's gradient rounds after every addition, in position order, as PyTorch's",
          "[reduced_float][autograd]") {
  // PyTorch 2.15's CPU embedding backward adds each position's gradient row into the weight's
  // gradient in 16 bits, one rounding per addition (unlike index_add_ and scatter_add_, which
  // accumulate in float32): the same bits, on both kernel paths.
  namespace F = ember::nn::functional;
  testing::on_both_paths([&] {
    for (const json& c : reference()["indexing"]) {
      const Tensor weight = testing::tensor_from_json(c["x"]).requires_grad_(true);
      INFO(dtype_name(weight.dtype()));
      F::embedding(testing::tensor_from_json(c["index"]), weight).backward(testing::tensor_from_json(c["source"]));
      const Tensor expected = testing::tensor_from_json(c["embedding_grad"]);
      REQUIRE(weight.grad().dtype() == weight.dtype());
      // float32 holds every 16-bit value exactly: equal floats are equal 16-bit values.
      CHECK(weight.grad().to(ember::kFloat32).equal(expected.to(ember::kFloat32)));
    }
  });
}

TEST_CASE("16-bit floats: max pooling with overlapping windows, and its gradient's additions, as PyTorch's",
          "[reduced_float][autograd]") {
  // 3x3 windows at stride 1 on rounded inputs: ties (the first index wins) and elements that
  // are the max of several windows, whose gradients add in 16 bits in output order, on both
  // kernel paths: bit for bit.
  namespace F = ember::nn::functional;
  testing::on_both_paths([&] {
    for (const json& c : reference()["overlapping_pool"]) {
      const Tensor x = testing::tensor_from_json(c["x"]).requires_grad_(true);
      INFO(dtype_name(x.dtype()));
      const Tensor pooled = F::max_pool2d(x, 3, 1);
      CHECK(pooled.to(ember::kFloat32).equal(testing::tensor_from_json(c["pooled"]).to(ember::kFloat32)));
      pooled.backward(testing::tensor_from_json(c["upstream"]));
      CHECK(x.grad().to(ember::kFloat32).equal(testing::tensor_from_json(c["grad"]).to(ember::kFloat32)));
    }
  });
}

namespace {
std::vector<std::uint16_t> bfloat16_bits(const Tensor& t) {
  const Tensor dense = t.contiguous();
  std::vector<std::uint16_t> bits;
  for (std::int64_t i = 0; i < dense.numel(); ++i) bits.push_back(dense.data_ptr<ember::BFloat16>()[i].bits);
  return bits;
}
}  // namespace

TEST_CASE("16-bit floats: bfloat16 max pooling with disjoint windows keeps the float32 path's bits, special values too",
          "[reduced_float][autograd]") {
  // The fast path widens and narrows bfloat16 planes by bits and, with disjoint windows,
  // writes each gradient without an addition (core/cpu/pool_kernels.cpp): NaN must still
  // become 0x7FC0 and a -0.0 gradient +0.0 (= 0 + g), as the float32 computation rounded.
  namespace F = ember::nn::functional;
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const Tensor x32 = ember::tensor({1.0f, nan, -2.0f, 3.0f, -0.0f, 0.0f, 5.0f, -inf, 9e-41f, -1.0f, 2.0f, 2.0f, 7.0f, -7.0f, 2.0f, 2.0f})
                         .reshape({1, 1, 4, 4});
  const Tensor upstream = ember::tensor({-0.0f, nan, 9e-41f, -inf}).reshape({1, 1, 2, 2}).to(ember::kBFloat16);
  testing::on_both_paths([&] {
    for (const auto& [kernel, stride] : {std::pair<int, int>{2, 2}, {2, 3}}) {
      INFO("kernel " << kernel << ", stride " << stride);
      const Tensor x = x32.to(ember::kBFloat16).requires_grad_(true);
      const Tensor wide = x32.to(ember::kBFloat16).to(ember::kFloat32).requires_grad_(true);
      const Tensor pooled = F::max_pool2d(x, kernel, stride), pooled_wide = F::max_pool2d(wide, kernel, stride);
      CHECK(bfloat16_bits(pooled) == bfloat16_bits(pooled_wide.to(ember::kBFloat16)));
      const Tensor g = upstream.slice(2, 0, pooled.size(2)).slice(3, 0, pooled.size(3));
      pooled.backward(g);
      pooled_wide.backward(g.to(ember::kFloat32));
      CHECK(bfloat16_bits(x.grad()) == bfloat16_bits(wide.grad().to(ember::kBFloat16)));
    }
  });
}

TEST_CASE("16-bit floats: SGD on bfloat16 and float16 parameters takes PyTorch's steps, bit for bit",
          "[reduced_float][optim]") {
  // tests/reference/gen_reduced_float_updates.py: torch.optim.SGD's single-tensor loop, every
  // intermediate rounded to the parameter's dtype; both of ember's paths (the fused step and
  // the composite mul_/add_ sequence) must give its parameters and momentum buffers.
  const json reference = testing::load_reference("reduced_float_updates.json");
  int count = 0;
  for (const json& c : reference["sgd"]) {
    for (bool fused : {true, false}) {
      const json& o = c["options"];
      const optim::SGDOptions options{.lr = o["lr"].get<double>(),
                                      .momentum = o.value("momentum", 0.0),
                                      .dampening = o.value("dampening", 0.0),
                                      .weight_decay = o.value("weight_decay", 0.0),
                                      .nesterov = o.value("nesterov", false),
                                      .maximize = o.value("maximize", false),
                                      .fused = fused};
      INFO(c["dtype"].get<std::string>() << " " << o.dump() << (fused ? " fused" : " composite"));
      Tensor param = testing::tensor_from_json(c["start"]).requires_grad_();
      optim::SGD optimizer({param}, options);
      for (std::size_t step = 0; step < c["grads"].size(); ++step) {
        INFO("step " << step);
        param.mutable_grad() = testing::tensor_from_json(c["grads"][step]);
        optimizer.step();
        require_matches(param.detach(), testing::tensor_from_json(c["params"][step]));
        if (!c["momentum_buffers"][step].is_null())
          require_matches(optimizer.state_dict().at("state.0.momentum_buffer"),
                          testing::tensor_from_json(c["momentum_buffers"][step]));
      }
    }
    ++count;
  }
  REQUIRE(count == 10);
}
