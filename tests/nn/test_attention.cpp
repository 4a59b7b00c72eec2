// tests/nn/test_attention.cpp — F::scaled_dot_product_attention (nn/attention.cpp) and
// F::linear on a 3-D input, against PyTorch (tests/reference/gen_attention.py ->
// attention.json): the path taken (the output's grad_fn against PyTorch's: fused or
// composite), outputs and the gradients of q, k, v in float32 and float64 for 2-D, 3-D
// and 4-D inputs, L != S, is_causal with L == S, L > S and L < S, bool and float masks (full
// and broadcast [L, S]), a float32 mask on float64 inputs, a custom scale, Ev != E, rows
// with every key masked (zeros, not NaN), head dim 1, broadcast batch dims, q/k/v taken as
// transformer heads from one packed tensor, and dropout with PyTorch's seeded mask; each on
// contiguous and on non-contiguous inputs, and on the reference loops. Then gradcheck and
// gradgradcheck in float64, the edge cases (no queries, no keys, dropout 0 / 1 / < 0), the
// memory a forward pass allocates (no copies of the heads' views), and PyTorch's messages.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <string>

#include <ember/autograd/gradcheck.h>
#include <ember/core/cpu_allocator.h>
#include <ember/autograd/node.h>
#include <ember/core/kernel_mode.h>
#include <ember/ember.h>

#include "nn_test_helpers.h"

using namespace ember;
namespace F = ember::nn::functional;
using ember::testing::load_reference;
using ember::testing::require_close;
using ember::testing::tensor_from_json;
using ember::testing::to_vector;
using Json = nlohmann::json;

namespace {

const Json& reference() {
  static const Json ref = load_reference("attention.json");
  return ref;
}

// The same values in a wider buffer, every other element of the last dim: a strided view.
Tensor spread_out(const Tensor& dense) {
  Shape wide = dense.sizes();
  if (wide.empty()) return dense;
  wide.back() *= 2;
  Tensor buffer = ember::zeros(wide, ember::dtype(dense.dtype()));
  Tensor view = buffer.slice(-1, 0, std::nullopt, 2);
  {
    NoGradGuard no_grad;
    view.copy_(dense);
  }
  return view;
}

struct Tolerance {
  double rtol, atol;
};
// float32: PyTorch's CPU kernels (flash or math) sum in other orders than ember's GEMM.
Tolerance tolerance_for(const Json& c) {
  return c["dtype"] == "float32" ? Tolerance{2e-5, 2e-6} : Tolerance{1e-12, 1e-13};
}

// q, k, v of a case (leaves that require grad), as stored or spread out; for a heads_view
// case the leaf is the packed x and q, k, v are its per-head views.
struct Inputs {
  std::vector<Tensor> leaves;
  Tensor q, k, v;
};

Inputs make_inputs(const Json& c, bool strided) {
  auto leaf = [strided](const Json& value) {
    Tensor t = tensor_from_json(value);
    return (strided ? spread_out(t) : t).requires_grad_(true);
  };
  Inputs in;
  if (c.contains("heads_view")) {
    const auto shape = c["heads_view"].get<std::vector<std::int64_t>>();
    const std::int64_t batch = shape[0], time = shape[1], heads = shape[2], head_dim = shape[3];
    Tensor x = leaf(c["x"]);
    in.leaves = {x};
    const std::int64_t channels = heads * head_dim;
    auto head_view = [&](std::int64_t i) {
      return x.narrow(-1, i * channels, channels).view({batch, time, heads, head_dim}).transpose(1, 2);
    };
    in.q = head_view(0);
    in.k = head_view(1);
    in.v = head_view(2);
  } else {
    in.q = leaf(c["q"]);
    in.k = leaf(c["k"]);
    in.v = leaf(c["v"]);
    in.leaves = {in.q, in.k, in.v};
  }
  return in;
}

Tensor run_case(const Json& c, const Inputs& in) {
  Tensor mask = c.contains("attn_mask") ? tensor_from_json(c["attn_mask"]) : Tensor();
  std::optional<double> scale;
  if (!c["scale"].is_null()) scale = c["scale"].get<double>();
  if (c.contains("dropout_seed")) manual_seed(c["dropout_seed"].get<std::uint64_t>());
  return F::scaled_dot_product_attention(in.q, in.k, in.v, mask, c["dropout_p"].get<double>(), c["is_causal"], scale);
}

void check_case(const std::string& name, const Json& c, bool strided) {
  INFO("case " << name << (strided ? " (strided inputs)" : ""));
  if (strided && c.contains("heads_view")) return;  // already strided: the heads are views of x
  const Tolerance tol = tolerance_for(c);
  Inputs in = make_inputs(c, strided);
  Tensor out = run_case(c, in);
  require_close(out, c["out"], tol.rtol, tol.atol);
  // The path PyTorch took, seen in the output's grad_fn: its CPU flash kernel, its math path
  // (the last op a matmul: mm for 2-D inputs, else batched) or, for 3-D inputs, either one
  // run as [1, N, L, E] then squeezed. ember takes the same path (nn/attention.h), except
  // with an attn_mask, which its fused kernel does not take: the composite then, as PyTorch's
  // math path. Under EMBER_KERNELS=reference the composite is ember's default.
  std::string expected = c[strided ? "grad_fn_strided" : "grad_fn"].get<std::string>();
  if (expected == "ScaledDotProductFlashAttentionForCpuBackward0" &&
      (c.contains("attn_mask") || kernel_mode() == KernelMode::Reference))
    expected = "UnsafeViewBackward0";
  REQUIRE(out.grad_fn()->name() == expected);
  (out * tensor_from_json(c["grad"])).sum().backward();
  if (c.contains("heads_view")) {
    require_close(in.leaves[0].grad(), c["dx"], tol.rtol, tol.atol);
  } else {
    require_close(in.q.grad(), c["dq"], tol.rtol, tol.atol);
    require_close(in.k.grad(), c["dk"], tol.rtol, tol.atol);
    require_close(in.v.grad(), c["dv"], tol.rtol, tol.atol);
  }
}

void check_all_cases() {
  for (const auto& [name, c] : reference()["cases"].items()) {
    check_case(name, c, false);
    check_case(name, c, true);
  }
}

}  // namespace

TEST_CASE("scaled_dot_product_attention matches PyTorch's outputs and gradients", "[nn][attention]") {
  check_all_cases();
}

TEST_CASE("scaled_dot_product_attention matches PyTorch on the reference loops", "[nn][attention][reference]") {
  KernelModeGuard reference_mode(KernelMode::Reference);
  check_all_cases();
}

TEST_CASE("scaled_dot_product_attention: a row with every key masked gives zeros, not NaN", "[nn][attention]") {
  // Checked against PyTorch's numbers above (hidden_row_* cases); here the property itself,
  // so that a NaN anywhere (forward or in any gradient) fails by name.
  const Json& c = reference()["cases"]["hidden_row_bool_float64"];
  Inputs in = make_inputs(c, false);
  Tensor out = run_case(c, in);
  REQUIRE(out.select(-2, 1).abs().sum().item<double>() == 0.0);
  REQUIRE(out.select(-2, 3).abs().sum().item<double>() == 0.0);
  out.sum().backward();
  for (const Tensor& leaf : in.leaves)
    for (double g : to_vector(leaf.grad())) REQUIRE_FALSE(std::isnan(g));
  REQUIRE(in.q.grad().select(-2, 1).abs().sum().item<double>() == 0.0);
}

TEST_CASE("scaled_dot_product_attention passes gradcheck and gradgradcheck in float64", "[nn][attention][gradcheck]") {
  manual_seed(7);
  auto opts = ember::dtype(DType::Float64).requires_grad(true);
  Tensor q = ember::randn({2, 2, 3, 4}, opts), k = ember::randn({2, 2, 5, 4}, opts), v = ember::randn({2, 2, 5, 3}, opts);
  Tensor bool_mask = ember::rand({3, 5}).gt(0.3);
  {
    NoGradGuard no_grad;
    bool_mask.select(1, 0).fill_(true);   // every query sees key 0 ...
    bool_mask.select(0, 1).fill_(false);  // ... except query 1, which sees none (zero gradient)
  }
  Tensor float_mask = ember::randn({2, 1, 3, 5}, opts);
  using autograd::TensorList;
  SECTION("plain, causal L < S, custom scale") {
    REQUIRE(autograd::gradcheck([](const TensorList& x) { return F::scaled_dot_product_attention(x[0], x[1], x[2]); }, {q, k, v}));
    REQUIRE(autograd::gradcheck(
        [](const TensorList& x) { return F::scaled_dot_product_attention(x[0], x[1], x[2], {}, 0.0, true, 0.7); }, {q, k, v}));
  }
  SECTION("causal L > S on 3-D inputs") {
    Tensor q3 = ember::randn({2, 6, 4}, opts), k3 = ember::randn({2, 3, 4}, opts), v3 = ember::randn({2, 3, 2}, opts);
    REQUIRE(autograd::gradcheck(
        [](const TensorList& x) { return F::scaled_dot_product_attention(x[0], x[1], x[2], {}, 0.0, true); }, {q3, k3, v3}));
  }
  SECTION("bool mask with a hidden row, float mask (differentiable too)") {
    REQUIRE(autograd::gradcheck(
        [&](const TensorList& x) { return F::scaled_dot_product_attention(x[0], x[1], x[2], bool_mask); }, {q, k, v}));
    REQUIRE(autograd::gradcheck(
        [](const TensorList& x) { return F::scaled_dot_product_attention(x[0], x[1], x[2], x[3]); }, {q, k, v, float_mask}));
  }
  SECTION("second derivatives") {
    REQUIRE(autograd::gradgradcheck(
        [](const TensorList& x) { return F::scaled_dot_product_attention(x[0], x[1], x[2], {}, 0.0, true); }, {q, k, v}));
  }
  SECTION("transformer heads from one packed tensor (strided batch dims)") {
    Tensor x = ember::randn({2, 3, 12}, opts);
    REQUIRE(autograd::gradcheck(
        [](const TensorList& in) {
          auto head = [&](std::int64_t i) { return in[0].narrow(-1, 4 * i, 4).view({2, 3, 2, 2}).transpose(1, 2); };
          return F::scaled_dot_product_attention(head(0), head(1), head(2), {}, 0.0, true);
        },
        {x}));
  }
}

TEST_CASE("scaled_dot_product_attention: dropout draws PyTorch's mask from the default generator", "[nn][attention][dropout]") {
  // The dropout cases above already compare with PyTorch under the same seed; this one says
  // why they can: the weights are dropped by F::dropout, whose draws are nn::Dropout's.
  manual_seed(11);
  Tensor q = ember::randn({1, 2, 4, 8}), k = ember::randn({1, 2, 6, 8}), v = ember::randn({1, 2, 6, 8});
  manual_seed(5);
  Tensor dropped = F::scaled_dot_product_attention(q, k, v, {}, 0.4);
  manual_seed(5);
  Tensor weights = F::dropout(ember::softmax(ember::matmul(q * (1.0 / std::sqrt(8.0)), k.transpose(-2, -1)), -1), 0.4);
  REQUIRE(to_vector(dropped) == to_vector(ember::matmul(weights, v)));
  // Different draws without reseeding.
  REQUIRE(to_vector(F::scaled_dot_product_attention(q, k, v, {}, 0.4)) != to_vector(dropped));
}

TEST_CASE("scaled_dot_product_attention edge cases match PyTorch", "[nn][attention]") {
  const Json& in = reference()["edge_inputs"];
  const Json& edges = reference()["edges"];
  Tensor q = tensor_from_json(in["q"]), k = tensor_from_json(in["k"]), v = tensor_from_json(in["v"]);
  require_close(F::scaled_dot_product_attention(q.slice(2, 0, 0), k, v), edges["no_queries"]);
  require_close(F::scaled_dot_product_attention(q, k.slice(2, 0, 0), v.slice(2, 0, 0)), edges["no_keys"]);
  require_close(F::scaled_dot_product_attention(q, k, v, {}, 1.0), edges["dropout_one"]);
  require_close(F::scaled_dot_product_attention(q, k, v, {}, -1.0), edges["negative_dropout"], 1e-12, 1e-13);
  require_close(F::scaled_dot_product_attention(q, k, v), edges["plain"], 1e-12, 1e-13);
}

TEST_CASE("attention's matmuls read the heads' views without copying them", "[nn][attention][memory]") {
  // q, k, v as a transformer takes them from one [B, T, 3C] projection: [B, H, T, D] views
  // whose B and H dims cannot merge into one stride, so bmm on [B*H, T, D] would need a
  // copy (PyTorch's matmul makes one). ember's matmul runs one strided-batch GEMM per b
  // instead: recording for autograd, each product allocates its result and nothing else.
  const std::int64_t batch = 2, time = 16, heads = 4, head_dim = 8, channels = heads * head_dim;
  Tensor x = ember::randn({batch, time, 3 * channels}).requires_grad_(true);
  auto head = [&](std::int64_t i) {
    return x.narrow(-1, i * channels, channels).view({batch, time, heads, head_dim}).transpose(1, 2);
  };
  Tensor q = head(0), k = head(1), v = head(2);
  auto bytes = [](std::int64_t elements) { return cpu::allocation_size(static_cast<std::size_t>(elements) * 4); };
  const std::size_t cache = cpu::cache_limit();
  cpu::set_cache_limit(0);  // every block in allocated_bytes, none served from the cache
  auto allocated_by = [&](const std::function<Tensor()>& product, std::int64_t result_elements) {
    cpu::reset_peak_memory_stats();
    const std::size_t before = cpu::memory_stats().allocated_bytes;
    Tensor result = product();
    CHECK(cpu::memory_stats().max_allocated_bytes - before == bytes(result_elements));
    return result;
  };
  Tensor scores = allocated_by([&] { return ember::matmul(q, k.transpose(-2, -1)); }, batch * heads * time * time);
  Tensor probabilities = ember::softmax(scores, -1);
  allocated_by([&] { return ember::matmul(probabilities, v); }, batch * heads * time * head_dim);
  cpu::set_cache_limit(cache);

  // The values and gradients are those of the same products on contiguous copies.
  Tensor strided_out = ember::matmul(probabilities, v);
  Tensor grad = ember::randn(strided_out.sizes());
  (strided_out * grad).sum().backward();
  const Tensor strided_grad = x.grad().clone();
  x.mutable_grad() = Tensor();
  Tensor dense_out = ember::matmul(ember::softmax(ember::matmul(q.contiguous(), k.contiguous().transpose(-2, -1)), -1),
                                   v.contiguous());
  (dense_out * grad).sum().backward();
  REQUIRE(to_vector(strided_out) == to_vector(dense_out));
  const std::vector<double> a = to_vector(strided_grad), b = to_vector(x.grad());
  for (std::size_t i = 0; i < a.size(); ++i) REQUIRE(a[i] == Approx(b[i]).epsilon(1e-5).margin(1e-6));
}

TEST_CASE("F::linear on [B, T, C] is one addmm over B*T rows and matches PyTorch", "[nn][linear][attention]") {
  for (const auto& [dtype_name, c] : reference()["linear_3d"].items()) {
    INFO(dtype_name);
    const double rtol = dtype_name == "float32" ? 1e-5 : 1e-12, atol = dtype_name == "float32" ? 1e-6 : 1e-13;
    Tensor x = tensor_from_json(c["x"]).requires_grad_(true);
    Tensor weight = tensor_from_json(c["weight"]).requires_grad_(true);
    Tensor bias = tensor_from_json(c["bias"]).requires_grad_(true);
    Tensor y = F::linear(x, weight, bias);
    require_close(y, c["out"], rtol, atol);
    // The graph shows the fold: UnsafeViewBackward0 <- AddmmBackward0 <- ViewBackward0 (x
    // seen as [B*T, C], a view) — one GEMM with the bias in it, no copy of x.
    REQUIRE(y.grad_fn()->name() == c["grad_fn"].get<std::string>());
    const auto top = std::dynamic_pointer_cast<autograd::Node>(y.grad_fn());
    REQUIRE(top != nullptr);
    const auto addmm_node = top->next_edges().at(0).node;
    REQUIRE(addmm_node->name() == "AddmmBackward0");
    REQUIRE(addmm_node->next_edges().at(1).node->name() == "ViewBackward0");
    (y * tensor_from_json(c["grad"])).sum().backward();
    require_close(x.grad(), c["dx"], rtol, atol);
    require_close(weight.grad(), c["dweight"], rtol, atol);
    require_close(bias.grad(), c["dbias"], rtol, atol);

    // nn::Linear is F::linear with its parameters.
    nn::Linear layer(6, 4);
    layer.to(x.dtype());
    {
      NoGradGuard no_grad;
      layer.weight.copy_(weight);
      layer.bias.copy_(bias);
    }
    require_close(layer(x.detach()), c["out"], rtol, atol);
  }
}

TEST_CASE("scaled_dot_product_attention refuses bad arguments with PyTorch's messages", "[nn][attention][errors]") {
  const Json& messages = reference()["errors"];
  auto message = [&](const char* key) { return messages[key].get<std::string>(); };
  const Json& in = reference()["edge_inputs"];
  Tensor q = tensor_from_json(in["q"]), k = tensor_from_json(in["k"]), v = tensor_from_json(in["v"]);
  auto sdpa = [](auto&&... args) { return F::scaled_dot_product_attention(args...); };
  Tensor bool_mask = ember::ones({3, 5}, ember::dtype(DType::Bool));
  REQUIRE_THROWS_AS(sdpa(q, k, v, bool_mask, 0.0, true), ValueError);
  REQUIRE_THROWS_WITH(sdpa(q, k, v, bool_mask, 0.0, true), message("mask_and_causal"));
  REQUIRE_THROWS_AS(sdpa(q, k, v.to(DType::Float32)), DTypeError);
  REQUIRE_THROWS_WITH(sdpa(q, k, v.to(DType::Float32)), message("dtypes"));
  REQUIRE_THROWS_WITH(sdpa(q, k, v, ember::ones({3, 5}, ember::dtype(DType::Int64))), message("mask_dtype"));
  REQUIRE_THROWS_AS(sdpa(q.select(0, 0).select(0, 0).select(0, 0), k.select(0, 0).select(0, 0).select(0, 0),
                         v.select(0, 0).select(0, 0).select(0, 0)),
                    ShapeError);
  REQUIRE_THROWS_WITH(sdpa(q.select(0, 0).select(0, 0).select(0, 0), k.select(0, 0).select(0, 0).select(0, 0),
                           v.select(0, 0).select(0, 0).select(0, 0)),
                      message("one_dim"));
  REQUIRE_THROWS_WITH(sdpa(q, k.narrow(-1, 0, 3), v), message("key_dim"));
  REQUIRE_THROWS_WITH(sdpa(q, k, v.narrow(2, 0, 4)), message("value_length"));
  REQUIRE_THROWS_AS(sdpa(q, k, v, ember::ones({4, 5}, ember::dtype(DType::Float64))), ShapeError);
  REQUIRE_THROWS_WITH(sdpa(q, k, v, ember::ones({4, 5}, ember::dtype(DType::Float64))), message("mask_shape"));
  REQUIRE_THROWS_WITH(sdpa(q, k, v, ember::ones({4, 5}, ember::dtype(DType::Bool))), message("mask_shape"));
  REQUIRE_THROWS_AS(sdpa(q, k, v, Tensor(), 1.5), ValueError);
  REQUIRE_THROWS_WITH(sdpa(q, k, v, Tensor(), 1.5), message("dropout_above_one"));
  // Integer inputs: the scaled query is floating, the value is not (PyTorch refuses them too).
  Tensor qi = ember::ones({3, 4}, ember::dtype(DType::Int64));
  REQUIRE_THROWS_AS(sdpa(qi, qi, qi), DTypeError);
}
