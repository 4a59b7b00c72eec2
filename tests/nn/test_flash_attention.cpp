// tests/nn/test_flash_attention.cpp — the fused attention path: ember::scaled_dot_product_flash_attention
// (autograd/attention_ops.cpp; kernels core/cpu/flash_attention_kernels.cpp and
// core/reference/flash_attention_loops.cpp) and how F::scaled_dot_product_attention chooses it
// (nn/attention.h).
//   * against PyTorch (tests/reference/gen_flash_attention.py -> flash_attention.json): the
//     node (PyTorch's fused one, or SqueezeBackward1 over it for 3-D inputs), the output, its
//     strides, the logsumexp, dq, dk, dv — on the fast kernels and on the reference loops;
//   * against the composite, forward and all three gradients, on shapes across the tiles (odd
//     L and S, L != S, causal and not, head dims 1, 16, 64, 80, the heads of a packed
//     projection), in float32 and float64, and the reference loops against the fast kernel;
//   * gradcheck and gradgradcheck in float64 (the second derivative is the composite's; PyTorch
//     refuses it), empty inputs, the same bits for 1 and 2 threads, no L×S buffer allocated;
//   * the choice: can_use_flash_attention's reasons, SdpaKernelGuard, EMBER_KERNELS=reference.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <optional>
#include <string>

#include <ember/autograd/gradcheck.h>
#include <ember/autograd/node.h>
#include <ember/core/cpu/gemm_kernels.h>
#include <ember/core/cpu_allocator.h>
#include <ember/core/kernel_mode.h>
#include <ember/core/parallel.h>
#include <ember/ember.h>

#include "forced_gemm_kernel.h"
#include "nn_test_helpers.h"

using namespace ember;
namespace F = ember::nn::functional;
using ember::nn::SDPBackend;
using ember::nn::SdpaKernelGuard;
using ember::testing::load_reference;
using ember::testing::require_close;
using ember::testing::tensor_from_json;
using ember::testing::to_vector;
using Json = nlohmann::json;

namespace {

constexpr const char* kFlashNode = "ScaledDotProductFlashAttentionForCpuBackward0";

const Json& reference() {
  static const Json ref = load_reference("flash_attention.json");
  return ref;
}

struct Inputs {
  std::vector<Tensor> leaves;
  Tensor q, k, v;
};

// The heads of a packed projection x [B, T, 3·H·D]: x[..., i·C:(i+1)·C].view(B, T, H, D).transpose(1, 2).
std::array<Tensor, 3> heads_of(const Tensor& x, std::int64_t batch, std::int64_t time, std::int64_t heads,
                               std::int64_t head_dim) {
  const std::int64_t channels = heads * head_dim;
  auto head = [&](std::int64_t i) {
    return x.narrow(-1, i * channels, channels).view({batch, time, heads, head_dim}).transpose(1, 2);
  };
  return {head(0), head(1), head(2)};
}

Inputs json_inputs(const Json& c) {
  Inputs in;
  if (c.contains("heads_view")) {
    const auto s = c["heads_view"].get<std::vector<std::int64_t>>();
    Tensor x = tensor_from_json(c["x"]).requires_grad_(true);
    in.leaves = {x};
    auto [q, k, v] = heads_of(x, s[0], s[1], s[2], s[3]);
    in.q = q;
    in.k = k;
    in.v = v;
  } else {
    in.q = tensor_from_json(c["q"]).requires_grad_(true);
    in.k = tensor_from_json(c["k"]).requires_grad_(true);
    in.v = tensor_from_json(c["v"]).requires_grad_(true);
    in.leaves = {in.q, in.k, in.v};
  }
  return in;
}

std::optional<double> scale_of(const Json& c) {
  return c["scale"].is_null() ? std::nullopt : std::optional<double>(c["scale"].get<double>());
}

void check_against_pytorch(const std::string& name, const Json& c) {
  INFO("case " << name);
  const bool f32 = c["dtype"] == "float32";
  const double rtol = f32 ? 2e-5 : 1e-12, atol = f32 ? 2e-6 : 1e-13;
  Inputs in = json_inputs(c);
  Tensor out = F::scaled_dot_product_attention(in.q, in.k, in.v, {}, 0.0, c["is_causal"], scale_of(c));
  REQUIRE(out.grad_fn()->name() == c["grad_fn"].get<std::string>());
  if (c["grad_fn"] == "SqueezeBackward1") {  // 3-D: the fused node under the squeeze
    const auto squeeze = std::dynamic_pointer_cast<autograd::Node>(out.grad_fn());
    REQUIRE(squeeze->next_edges().at(0).node->name() == kFlashNode);
  }
  CHECK(out.strides() == c["out_strides"].get<std::vector<std::int64_t>>());
  require_close(out, c["out"], rtol, atol);
  (out * tensor_from_json(c["grad"])).sum().backward();
  if (c.contains("heads_view")) {
    require_close(in.leaves[0].grad(), c["dx"], rtol, atol);
  } else {
    require_close(in.q.grad(), c["dq"], rtol, atol);
    require_close(in.k.grad(), c["dk"], rtol, atol);
    require_close(in.v.grad(), c["dv"], rtol, atol);
  }
  if (c.contains("logsumexp")) {
    NoGradGuard no_grad;
    auto [output, logsumexp] = ember::scaled_dot_product_flash_attention(in.q, in.k, in.v, c["is_causal"], scale_of(c));
    require_close(logsumexp, c["logsumexp"], rtol, atol);
  }
}

// Random q, k, v for a shape, contiguous or as the heads of one packed tensor.
struct Spec {
  std::int64_t batch, heads, queries, keys, head_dim;
  bool causal;
  bool packed;  // q, k, v as heads of x [B, T, 3·H·D] (needs queries == keys)
};

Inputs random_inputs(const Spec& s, DType dtype, std::uint64_t seed) {
  manual_seed(seed);
  auto opts = ember::dtype(dtype);
  Inputs in;
  if (s.packed) {
    Tensor x = ember::randn({s.batch, s.queries, 3 * s.heads * s.head_dim}, opts).requires_grad_(true);
    in.leaves = {x};
    auto [q, k, v] = heads_of(x, s.batch, s.queries, s.heads, s.head_dim);
    in.q = q;
    in.k = k;
    in.v = v;
  } else {
    in.q = ember::randn({s.batch, s.heads, s.queries, s.head_dim}, opts).requires_grad_(true);
    in.k = ember::randn({s.batch, s.heads, s.keys, s.head_dim}, opts).requires_grad_(true);
    in.v = ember::randn({s.batch, s.heads, s.keys, s.head_dim}, opts).requires_grad_(true);
    in.leaves = {in.q, in.k, in.v};
  }
  return in;
}

struct Run {
  Tensor out;
  std::vector<Tensor> grads;
  std::string node;
};

// F::scaled_dot_product_attention restricted to one backend, then backward from `grad`.
Run run_backend(const Spec& s, DType dtype, SDPBackend backend, std::uint64_t seed) {
  Inputs in = random_inputs(s, dtype, seed);
  Run run;
  {
    SdpaKernelGuard only(backend);
    run.out = F::scaled_dot_product_attention(in.q, in.k, in.v, {}, 0.0, s.causal);
  }
  run.node = run.out.grad_fn()->name();
  manual_seed(seed + 1);
  (run.out * ember::randn(run.out.sizes(), ember::dtype(dtype))).sum().backward();
  for (const Tensor& leaf : in.leaves) run.grads.push_back(leaf.grad());
  return run;
}

void require_all_close(const Tensor& got, const Tensor& want, double rtol, double atol) {
  REQUIRE(got.sizes() == want.sizes());
  const std::vector<double> a = to_vector(got), b = to_vector(want);
  double worst = 0.0;
  std::size_t worst_at = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double excess = std::abs(a[i] - b[i]) - (atol + rtol * std::abs(b[i]));
    if (excess > worst || std::isnan(a[i]) != std::isnan(b[i])) {
      worst = std::isnan(a[i]) ? 1.0 : excess;
      worst_at = i;
    }
  }
  INFO("worst element " << worst_at << ": " << (a.empty() ? 0.0 : a[worst_at]) << " vs "
                        << (b.empty() ? 0.0 : b[worst_at]));
  REQUIRE(worst == 0.0);
}

const std::vector<Spec>& specs() {
  static const std::vector<Spec> list{
      {1, 1, 1, 1, 16, false, false},  {2, 3, 7, 5, 16, true, false},   {1, 2, 64, 64, 64, true, false},
      {1, 2, 65, 63, 64, false, false}, {1, 1, 130, 70, 16, true, false}, {1, 1, 70, 130, 16, true, false},
      {1, 1, 9, 300, 80, false, false}, {1, 1, 257, 257, 1, true, false},  {2, 2, 33, 33, 80, true, false},
      {2, 3, 40, 40, 16, true, true},   {1, 2, 67, 67, 64, false, true},
  };
  return list;
}

}  // namespace

TEST_CASE("flash attention matches PyTorch's fused CPU kernel", "[nn][attention][flash]") {
  KernelModeGuard fast(KernelMode::Fast);  // the default choice (the suite also runs under EMBER_KERNELS=reference)
  for (const auto& [name, c] : reference()["cases"].items()) check_against_pytorch(name, c);
}

TEST_CASE("flash attention on the reference loops matches PyTorch", "[nn][attention][flash][reference]") {
  // EMBER_KERNELS=reference picks the composite by default; forcing the fused op runs it on
  // the reference loops (core/reference/flash_attention_loops.cpp).
  KernelModeGuard reference_mode(KernelMode::Reference);
  SdpaKernelGuard flash_only(SDPBackend::FlashAttention);
  for (const auto& [name, c] : reference()["cases"].items()) check_against_pytorch(name, c);
}

TEST_CASE("fused and composite attention agree across tiles, layouts and dtypes", "[nn][attention][flash]") {
  for (const Spec& s : specs()) {
    for (DType dtype : {DType::Float32, DType::Float64}) {
      INFO("B " << s.batch << " H " << s.heads << " L " << s.queries << " S " << s.keys << " E " << s.head_dim
                << (s.causal ? " causal" : "") << (s.packed ? " packed heads" : "") << " "
                << dtype_name(dtype));
      const double rtol = dtype == DType::Float32 ? 2e-4 : 1e-10, atol = dtype == DType::Float32 ? 2e-5 : 1e-12;
      const Run fused = run_backend(s, dtype, SDPBackend::FlashAttention, 100);
      const Run composite = run_backend(s, dtype, SDPBackend::Math, 100);
      REQUIRE(fused.node == kFlashNode);
      REQUIRE(composite.node == "UnsafeViewBackward0");
      require_all_close(fused.out, composite.out, rtol, atol);
      for (std::size_t i = 0; i < fused.grads.size(); ++i) {
        INFO("gradient of leaf " << i);
        require_all_close(fused.grads[i], composite.grads[i], rtol, atol);
      }
      Run reference;
      {
        KernelModeGuard reference_mode(KernelMode::Reference);
        reference = run_backend(s, dtype, SDPBackend::FlashAttention, 100);
      }
      require_all_close(fused.out, reference.out, rtol, atol);
      for (std::size_t i = 0; i < fused.grads.size(); ++i) require_all_close(fused.grads[i], reference.grads[i], rtol, atol);
    }
  }
}

TEST_CASE("flash attention's row loops agree on every instruction set", "[nn][attention][flash]") {
  // The exp, max and sums between the tile products are built three times
  // (core/cpu/flash_attention_rows.h); EMBER_GEMM_KERNEL picks the one this call uses.
  const Spec s{1, 2, 70, 300, 16, true, false};
  const Run composite = run_backend(s, DType::Float64, SDPBackend::Math, 9);
  const Run composite32 = run_backend(s, DType::Float32, SDPBackend::Math, 9);
  for (const char* isa : {"portable", "avx2", "avx512"}) {
    if (!cpu::gemm_kernel_available(isa)) continue;
    INFO(isa);
    std::optional<ember::testing::ForcedKernel> forced(std::in_place, isa);
    const Run fused = run_backend(s, DType::Float64, SDPBackend::FlashAttention, 9);
    const Run fused32 = run_backend(s, DType::Float32, SDPBackend::FlashAttention, 9);
    forced.reset();
    require_all_close(fused.out, composite.out, 1e-10, 1e-12);
    require_all_close(fused32.out, composite32.out, 2e-4, 2e-5);
    for (std::size_t i = 0; i < 3; ++i) {
      require_all_close(fused.grads[i], composite.grads[i], 1e-10, 1e-12);
      require_all_close(fused32.grads[i], composite32.grads[i], 2e-4, 2e-5);
    }
  }
}

TEST_CASE("flash attention gives the same bits on one thread and on several", "[nn][attention][flash]") {
  const int threads = get_num_threads();
  const Spec s{2, 2, 150, 150, 64, true, true};
  set_num_threads(1);
  const Run one = run_backend(s, DType::Float32, SDPBackend::FlashAttention, 7);
  set_num_threads(std::max(threads, 2));
  const Run many = run_backend(s, DType::Float32, SDPBackend::FlashAttention, 7);
  set_num_threads(threads);
  REQUIRE(to_vector(one.out) == to_vector(many.out));
  REQUIRE(to_vector(one.grads[0]) == to_vector(many.grads[0]));
}

TEST_CASE("flash attention passes gradcheck and gradgradcheck in float64", "[nn][attention][flash][gradcheck]") {
  manual_seed(3);
  auto opts = ember::dtype(DType::Float64).requires_grad(true);
  using autograd::TensorList;
  auto fused = [](bool causal, std::optional<double> scale = std::nullopt) {
    return [causal, scale](const TensorList& x) {
      return std::get<0>(ember::scaled_dot_product_flash_attention(x[0], x[1], x[2], causal, scale));
    };
  };
  SECTION("4-D, plain and causal, L < S and L > S, a custom scale, Ev != E") {
    Tensor q = ember::randn({1, 2, 3, 4}, opts), k = ember::randn({1, 2, 5, 4}, opts), v = ember::randn({1, 2, 5, 3}, opts);
    REQUIRE(autograd::gradcheck(fused(false), {q, k, v}));
    REQUIRE(autograd::gradcheck(fused(true, 0.7), {q, k, v}));
    Tensor q6 = ember::randn({2, 6, 4}, opts), k3 = ember::randn({2, 3, 4}, opts), v3 = ember::randn({2, 3, 4}, opts);
    REQUIRE(autograd::gradcheck(fused(true), {q6, k3, v3}));
  }
  SECTION("F::scaled_dot_product_attention on the heads of a packed projection") {
    KernelModeGuard fast(KernelMode::Fast);
    Tensor x = ember::randn({2, 3, 12}, opts);
    REQUIRE(autograd::gradcheck(
        [](const TensorList& in) {
          auto [q, k, v] = heads_of(in[0], 2, 3, 2, 2);
          Tensor out = F::scaled_dot_product_attention(q, k, v, {}, 0.0, true);
          REQUIRE(out.grad_fn()->name() == kFlashNode);
          return out;
        },
        {x}));
  }
  SECTION("second derivatives (the composite's formula under create_graph)") {
    Tensor q = ember::randn({1, 2, 3, 4}, opts), k = ember::randn({1, 2, 4, 4}, opts), v = ember::randn({1, 2, 4, 4}, opts);
    REQUIRE(autograd::gradgradcheck(fused(true), {q, k, v}));
    REQUIRE(autograd::gradgradcheck(fused(false, 0.4), {q, k, v}));
  }
}

TEST_CASE("double backward through the fused op equals the composite's", "[nn][attention][flash]") {
  // PyTorch refuses it (its fused backward has no derivative); ember differentiates the
  // composite's backward formula there. Both graphs must give the same second derivative.
  INFO("PyTorch: " << reference()["double_backward_error"].get<std::string>());
  auto second = [](SDPBackend backend) {
    manual_seed(5);
    auto opts = ember::dtype(DType::Float64).requires_grad(true);
    Tensor q = ember::randn({1, 2, 4, 8}, opts), k = ember::randn({1, 2, 6, 8}, opts), v = ember::randn({1, 2, 6, 8}, opts);
    SdpaKernelGuard only(backend);
    Tensor out = F::scaled_dot_product_attention(q, k, v, {}, 0.0, true);
    auto grads = autograd::grad({(out * out).sum()}, {q, k, v}, {}, /*retain_graph=*/true, /*create_graph=*/true);
    (grads[0].sum() + (grads[1] * grads[2]).sum()).backward();
    return std::vector<Tensor>{q.grad(), k.grad(), v.grad()};
  };
  const auto fused = second(SDPBackend::FlashAttention), composite = second(SDPBackend::Math);
  for (std::size_t i = 0; i < 3; ++i) require_all_close(fused[i], composite[i], 1e-10, 1e-12);
}

TEST_CASE("the fused op on empty inputs", "[nn][attention][flash]") {
  auto opts = ember::dtype(DType::Float32).requires_grad(true);
  SECTION("no keys: zeros, logsumexp -inf, zero gradients") {
    Tensor q = ember::randn({2, 2, 3, 4}, opts), k = ember::randn({2, 2, 0, 4}, opts), v = ember::randn({2, 2, 0, 4}, opts);
    auto [out, lse] = ember::scaled_dot_product_flash_attention(q, k, v, true);
    REQUIRE(out.sizes() == Shape{2, 2, 3, 4});
    for (double x : to_vector(out)) REQUIRE(x == 0.0);
    for (double x : to_vector(lse)) REQUIRE(x == -std::numeric_limits<double>::infinity());
    out.sum().backward();
    for (double x : to_vector(q.grad())) REQUIRE(x == 0.0);
    REQUIRE(k.grad().sizes() == Shape{2, 2, 0, 4});
  }
  SECTION("no queries, no batch entries") {
    Tensor q = ember::randn({2, 2, 0, 4}, opts), k = ember::randn({2, 2, 5, 4}, opts), v = ember::randn({2, 2, 5, 4}, opts);
    auto [out, lse] = ember::scaled_dot_product_flash_attention(q, k, v, false);
    REQUIRE(out.sizes() == Shape{2, 2, 0, 4});
    REQUIRE(lse.sizes() == Shape{2, 2, 0});
    out.sum().backward();
    for (double x : to_vector(k.grad())) REQUIRE(x == 0.0);
    Tensor q0 = ember::randn({0, 2, 3, 4}, opts), k0 = ember::randn({0, 2, 5, 4}, opts), v0 = ember::randn({0, 2, 5, 4}, opts);
    REQUIRE(std::get<0>(ember::scaled_dot_product_flash_attention(q0, k0, v0, true)).sizes() == Shape{0, 2, 3, 4});
  }
  SECTION("F::scaled_dot_product_attention leaves them to the composite, as PyTorch") {
    Tensor q = ember::randn({1, 1, 0, 4}), k = ember::randn({1, 1, 5, 4}), v = ember::randn({1, 1, 5, 4});
    REQUIRE(nn::select_sdp_backend(q, k, v) == SDPBackend::Math);
    REQUIRE(nn::select_sdp_backend(k, q, q) == SDPBackend::Math);
  }
}

TEST_CASE("fused attention never allocates the L x S scores", "[nn][attention][flash][memory]") {
  const std::int64_t heads = 2, time = 512, head_dim = 32;
  Tensor q = ember::randn({1, heads, time, head_dim}), k = ember::randn({1, heads, time, head_dim}),
         v = ember::randn({1, heads, time, head_dim});
  for (Tensor* t : {&q, &k, &v}) t->requires_grad_(true);
  SdpaKernelGuard flash(SDPBackend::FlashAttention);
  const std::size_t cache = cpu::cache_limit();
  cpu::set_cache_limit(0);
  cpu::reset_peak_memory_stats();
  const std::size_t before = cpu::memory_stats().allocated_bytes;
  Tensor out = F::scaled_dot_product_attention(q, k, v, {}, 0.0, true);
  out.sum().backward();
  const std::size_t peak = cpu::memory_stats().max_allocated_bytes - before;
  cpu::set_cache_limit(cache);
  // One head's scores alone would be time² floats (1 MiB); the whole pass holds q, k, v-sized
  // tensors (output, gradients) and one value per query row.
  INFO("peak " << peak << " bytes");
  REQUIRE(peak < static_cast<std::size_t>(time * time * 4));
}

TEST_CASE("which path F::scaled_dot_product_attention takes", "[nn][attention][flash]") {
  KernelModeGuard fast(KernelMode::Fast);
  Tensor q = ember::randn({2, 2, 5, 8}), k = ember::randn({2, 2, 7, 8}), v = ember::randn({2, 2, 7, 8});
  std::string why;
  REQUIRE(nn::can_use_flash_attention(q, k, v, {}, 0.0, true, &why));
  REQUIRE(why.empty());
  REQUIRE(nn::select_sdp_backend(q, k, v) == SDPBackend::FlashAttention);
  auto reason = [&](const Tensor& qq, const Tensor& kk, const Tensor& vv, const Tensor& mask = {}, double p = 0.0) {
    std::string text;
    REQUIRE_FALSE(nn::can_use_flash_attention(qq, kk, vv, mask, p, false, &text));
    REQUIRE(nn::select_sdp_backend(qq, kk, vv, mask, p) == SDPBackend::Math);
    return text;
  };
  // PyTorch's conditions for its CPU flash kernel, in its order and with its words.
  REQUIRE(reason(q, k, v, {}, 0.1) == "Both fused kernels do not support non-zero dropout.");
  REQUIRE(reason(q[0], k[0], v[0]) ==
          "All fused kernels requires query, key and value to be 4 dimensional, but got Query dim: 3, Key dim: 3, "
          "Value dim: 3 instead.");
  REQUIRE_THAT(reason(q, k.narrow(0, 0, 1), v.narrow(0, 0, 1)),
               Catch::StartsWith("For dense inputs, both fused kernels require query, key and value to have the same "
                                 "batch_size. Query.sizes(): [2, 2, 5, 8], Key.sizes(): [1, 2, 7, 8]"));
  REQUIRE_THAT(reason(q, k.narrow(1, 0, 1), v.narrow(1, 0, 1)),
               Catch::StartsWith("For dense input, both fused kernels require query, key and value to have the same "
                                 "num_heads."));
  REQUIRE_THAT(reason(q, k, v, ember::ones({5, 7}, ember::dtype(DType::Bool))), Catch::Contains("attn_mask"));
  REQUIRE(reason(q, k, v.narrow(-1, 0, 4)) ==
          "Flash attention requires q,k,v to have the same last dimension. Got Query.size(-1): 8, Key.size(-1): 8, "
          "Value.size(-1): 4 instead.");
  REQUIRE(reason(q.narrow(2, 0, 0), k, v) == "All fused kernels do not support zero seq_len_q or seq_len_kv.");
  REQUIRE(reason(q.transpose(2, 3).contiguous().transpose(2, 3), k, v) ==
          "All fused kernels require the last dimension of the input to have stride 1. Got Query.stride(-1): 5, "
          "Key.stride(-1): 1, Value.stride(-1): 1 instead.");
  // Integer inputs are refused before the choice (PyTorch refuses them too).
  SECTION("SdpaKernelGuard forces a path, as torch.nn.attention.sdpa_kernel") {
    {
      SdpaKernelGuard math(SDPBackend::Math);
      REQUIRE_FALSE(nn::sdp_backend_enabled(SDPBackend::FlashAttention));
      REQUIRE(reason(q, k, v) == "Flash attention has been runtime disabled.");
      REQUIRE(F::scaled_dot_product_attention(q, k, v).sizes() == Shape{2, 2, 5, 8});
    }
    REQUIRE(nn::sdp_backend_enabled(SDPBackend::FlashAttention));
    REQUIRE(nn::sdp_backend_enabled(SDPBackend::Math));
    SdpaKernelGuard flash(SDPBackend::FlashAttention);
    REQUIRE(nn::select_sdp_backend(q, k, v) == SDPBackend::FlashAttention);
    REQUIRE_THROWS_WITH(F::scaled_dot_product_attention(q, k, v, {}, 0.5),
                        "No available kernel.  Aborting execution. Flash attention kernel not used because: Both fused "
                        "kernels do not support non-zero dropout.");
  }
  SECTION("EMBER_KERNELS=reference picks the composite unless the fused op is forced") {
    KernelModeGuard reference_mode(KernelMode::Reference);
    REQUIRE(nn::select_sdp_backend(q, k, v) == SDPBackend::Math);
    SdpaKernelGuard flash(SDPBackend::FlashAttention);
    REQUIRE(nn::select_sdp_backend(q, k, v) == SDPBackend::FlashAttention);
  }
  SECTION("three 3-D inputs run as one batch of heads, then squeezed (PyTorch 2.15)") {
    Tensor q3 = q[0].requires_grad_(true);
    Tensor out = F::scaled_dot_product_attention(q3, k[0], v[0], {}, 0.0, true);
    REQUIRE(out.sizes() == Shape{2, 5, 8});
    REQUIRE(out.grad_fn()->name() == "SqueezeBackward1");
  }
}

TEST_CASE("the fused op refuses bad arguments", "[nn][attention][flash][errors]") {
  Tensor q = ember::randn({1, 2, 3, 4}), k = ember::randn({1, 2, 5, 4}), v = ember::randn({1, 2, 5, 4});
  auto fused = [](const Tensor& a, const Tensor& b, const Tensor& c) {
    return ember::scaled_dot_product_flash_attention(a, b, c);
  };
  REQUIRE_THROWS_AS(fused(q, k, v.to(DType::Float64)), DTypeError);
  REQUIRE_THROWS_AS(fused(q.to(DType::Int64), k.to(DType::Int64), v.to(DType::Int64)), DTypeError);
  REQUIRE_THROWS_AS(fused(q, k.narrow(1, 0, 1), v.narrow(1, 0, 1)), ShapeError);
  REQUIRE_THROWS_AS(fused(q, k.narrow(-1, 0, 3), v), ShapeError);
  REQUIRE_THROWS_AS(fused(q, k, v.narrow(2, 0, 4)), ShapeError);
  REQUIRE_THROWS_AS(fused(q[0][0][0], k[0][0][0], v[0][0][0]), ShapeError);
}
