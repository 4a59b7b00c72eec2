// tests/nn/test_embedding.cpp — ember::embedding, F::embedding and nn::Embedding (issue 21)
// against PyTorch (tests/reference/gen_embedding.py): outputs and weight gradients bit for
// bit (duplicated indices summed in input order, padding_idx, 1-, 2-, 3-d and 0-d index
// tensors, int32 indices, transposed and strided weight and indices, empty index tensors,
// float64), the initial weights bit for bit after manual_seed, the reprs and PyTorch's
// error messages; gradcheck / gradgradcheck in float64; the fast CPU kernel against the
// reference loop on a large case; and the double-backward node.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include <ember/autograd/gradcheck.h>
#include <ember/core/embedding.h>
#include <ember/core/kernel_mode.h>
#include <ember/core/native.h>
#include <ember/ember.h>

#include "nn_test_helpers.h"

using namespace ember;
namespace F = ember::nn::functional;
using Catch::Matchers::Equals;
using ember::testing::load_reference;
using ember::testing::require_equal;
using ember::testing::tensor_from_json;

namespace {

const nlohmann::json& reference() {
  static const nlohmann::json ref = load_reference("embedding.json");
  return ref;
}

// The stored tensor viewed as gen_embedding.py's view_of does.
Tensor view_of(const Tensor& stored, const std::string& layout) {
  if (layout == "transposed") return stored.t();
  if (layout == "step2") return stored.slice(-1, std::nullopt, std::nullopt, 2);
  return stored;
}

std::optional<std::int64_t> padding_of(const nlohmann::json& value) {
  if (value.is_null()) return std::nullopt;
  return value.get<std::int64_t>();
}

// Same dtype, shape and bytes (so also -0.0 against 0.0).
void require_same_bits(const Tensor& actual, const Tensor& expected) {
  REQUIRE(actual.dtype() == expected.dtype());
  REQUIRE(actual.sizes() == expected.sizes());
  if (actual.numel() == 0) return;  // nothing to compare, and an empty tensor's data may be null
  const Tensor a = actual.contiguous(), b = expected.contiguous();
  REQUIRE(std::memcmp(a.data_ptr(), b.data_ptr(), static_cast<std::size_t>(a.numel()) * itemsize(a.dtype())) == 0);
}

// Random indices in [0, rows) with one hot row read far more often than the rest.
Tensor skewed_indices(std::int64_t count, std::int64_t rows, std::int64_t hot_row) {
  Tensor indices = ember::randint(0, rows, {count});
  Tensor hot = ember::rand({count}) < 0.4;
  return ember::where(hot, ember::full({}, hot_row, TensorOptions().dtype(kInt64)), indices);
}

}  // namespace

TEST_CASE("embedding matches PyTorch bit for bit: output and weight gradient", "[nn][embedding]") {
  for (KernelMode mode : {KernelMode::Fast, KernelMode::Reference}) {
    KernelModeGuard guard(mode);
    for (const auto& [name, c] : reference()["cases"].items()) {
      SECTION(name + (mode == KernelMode::Fast ? " (fast)" : " (reference)")) {
        Tensor weight = view_of(tensor_from_json(c["weight"]), c["weight_layout"]).requires_grad_();
        const Tensor indices = view_of(tensor_from_json(c["indices"]), c["index_layout"]);
        if (c["weight_layout"] != "contiguous") REQUIRE_FALSE(weight.is_contiguous());
        if (c["index_layout"] != "contiguous") REQUIRE_FALSE(indices.is_contiguous());
        const Tensor out = F::embedding(indices, weight, padding_of(c["padding_idx"]));
        REQUIRE(out.grad_fn()->name() == c["grad_fn"].get<std::string>());
        require_same_bits(out, tensor_from_json(c["out"]));
        (out * tensor_from_json(c["grad"])).sum().backward();
        require_same_bits(weight.grad(), tensor_from_json(c["grad_weight"]));
      }
    }
  }
}

TEST_CASE("nn::Embedding starts with PyTorch's weights after manual_seed, bit for bit, and prints as PyTorch",
          "[nn][embedding]") {
  for (const auto& [name, c] : reference()["init"].items()) {
    SECTION(name) {
      manual_seed(c["seed"].get<std::uint64_t>());
      nn::Embedding module(nn::EmbeddingOptions(c["num_embeddings"], c["embedding_dim"])
                               .padding_idx(padding_of(c["padding_idx"])));
      require_same_bits(module.weight, tensor_from_json(c["weight"]));
      REQUIRE(module.repr() == c["repr"].get<std::string>());
      REQUIRE(module.named_parameters().size() == 1);
      REQUIRE(module.weight.requires_grad());
    }
  }
  nn::Embedding plain(65, 32);
  REQUIRE(plain.repr() == "Embedding(65, 32)");
  REQUIRE_FALSE(plain.options.padding_idx().has_value());
}

TEST_CASE("nn::Embedding looks up rows of any index shape; the padding row gets no gradient", "[nn][embedding]") {
  manual_seed(3);
  nn::Embedding module(nn::EmbeddingOptions(6, 4).padding_idx(-1));
  REQUIRE(*module.options.padding_idx() == 5);
  const Tensor indices = ember::tensor({{5, 1, 1}, {0, 5, 2}}, TensorOptions().dtype(kInt64));
  Tensor out = module(indices);
  REQUIRE(out.sizes() == Shape{2, 3, 4});
  REQUIRE(native::equal(out.select(0, 1).select(0, 2), module.weight.select(0, 2)));
  REQUIRE(native::equal(out.select(0, 0).select(0, 0), ember::zeros({4})));  // the padding row starts at zero
  out.sum().backward();
  const Tensor grad = module.weight.grad();
  REQUIRE(native::equal(grad.select(0, 5), ember::zeros({4})));
  REQUIRE(native::equal(grad.select(0, 1), ember::full({4}, 2.0)));
  REQUIRE(native::equal(grad.select(0, 3), ember::zeros({4})));
  // 0-d index -> [dim]; empty -> [0, dim]
  REQUIRE(module(ember::full({}, 2, TensorOptions().dtype(kInt64))).sizes() == Shape{4});
  REQUIRE(module(ember::zeros({0}, TensorOptions().dtype(kInt32))).sizes() == Shape{0, 4});
}

TEST_CASE("embedding passes gradcheck and gradgradcheck in float64 w.r.t. the weight", "[nn][embedding][gradcheck]") {
  manual_seed(11);
  const Tensor stored = ember::randn({4, 7}, kFloat64);
  // A transposed weight [7, 4]: non-contiguous.
  Tensor weight = stored.t().requires_grad_();
  const Tensor indices = ember::tensor({{6, 1, 6}, {0, 6, 3}}, TensorOptions().dtype(kInt64));
  for (std::int64_t padding : {-1, 5, 6, 3}) {
    INFO("padding_idx " << padding);
    auto fn = [&](const autograd::TensorList& in) { return ember::embedding(in[0], indices, padding); };
    // A padding row that is read is a deliberate non-derivative (its gradient is zero while
    // the output moves with it), so finite differences disagree there, as in PyTorch: only
    // an unread padding row (5) goes through gradcheck. The gradient's own derivative (the
    // masked gather) is exact for every padding row.
    if (padding == -1 || padding == 5) REQUIRE(autograd::gradcheck(fn, {weight}));
    REQUIRE(autograd::gradgradcheck(fn, {weight}));
  }
  auto zero_d = [&](const autograd::TensorList& in) {
    return ember::embedding(in[0], ember::full({}, 2, TensorOptions().dtype(kInt64)));
  };
  REQUIRE(autograd::gradcheck(zero_d, {weight}));
}

TEST_CASE("the embedding gradient is recorded again under create_graph (EmbeddingDenseBackward0)",
          "[nn][embedding][gradcheck]") {
  Tensor weight = ember::randn({5, 2}, kFloat64).requires_grad_();
  const Tensor indices = ember::tensor({1, 4, 1, 2}, TensorOptions().dtype(kInt64));
  const Tensor out = ember::embedding(weight, indices, 4);
  const Tensor v = ember::randn({4, 2}, kFloat64).requires_grad_();
  const Tensor grad = autograd::grad({out}, {weight}, {v}, /*retain_graph=*/true, /*create_graph=*/true)[0];
  REQUIRE(grad.grad_fn()->name() == "EmbeddingDenseBackward0");
  // d(Σ grad · u)/dv = u[indices], zero where the index is the padding row.
  const Tensor u = ember::randn({5, 2}, kFloat64);
  const Tensor dv = autograd::grad({(grad * u).sum()}, {v})[0];
  Tensor expected = u.index_select(0, indices).clone();
  expected.select(0, 1).zero_();
  REQUIRE(native::equal(dv, expected));
}

TEST_CASE("the fast CPU embedding backward equals the reference loop bit for bit on a large case",
          "[nn][embedding][reference]") {
  manual_seed(5);
  // 300 columns: more than one column block of the fast kernel; a hot row read by ~40 %.
  for (DType dtype : {kFloat32, kFloat64}) {
    for (std::int64_t padding : {-1, 7}) {
      INFO("dtype " << scalar_type_name(dtype) << ", padding_idx " << padding);
      const Tensor indices = skewed_indices(5000, 37, 7);
      // Mixed magnitudes (e^-7 .. e^7), so that another summation order would round differently.
      const Tensor grad = ember::randn({5000, 300}, dtype) * ember::exp(ember::randint(-7, 8, {5000, 1}).to(dtype));
      const Tensor fast = native::embedding_backward(grad, indices, 37, padding);
      Tensor reference_result;
      {
        KernelModeGuard guard(KernelMode::Reference);
        reference_result = native::embedding_backward(grad, indices, 37, padding);
      }
      require_same_bits(fast, reference_result);
      // index_add's CPU loop over one outer slice also adds in input order.
      if (padding < 0) require_same_bits(fast, ember::index_add(ember::zeros({37, 300}, dtype), 0, indices, grad));
      // ... and a sum in another order would differ: the case can tell orders apart.
      const Tensor backwards = 4999 - ember::arange(5000, TensorOptions().dtype(kInt64));
      const Tensor reversed_sum =
          native::embedding_backward(grad.index_select(0, backwards), indices.index_select(0, backwards), 37, padding);
      REQUIRE_FALSE(native::equal(fast, reversed_sum));
    }
  }
}

TEST_CASE("embedding errors carry PyTorch's messages", "[nn][embedding][errors]") {
  const auto& errors = reference()["errors"];
  auto message = [&](const char* name) { return errors[name]["message"].get<std::string>(); };
  const Tensor w = ember::randn({5, 3});
  auto long_tensor = [](const NestedData& values) { return ember::tensor(values, TensorOptions().dtype(kInt64)); };
  REQUIRE_THROWS_AS(F::embedding(ember::tensor({1.0, 2.0}), w), DTypeError);
  REQUIRE_THROWS_WITH(F::embedding(ember::tensor({1.0, 2.0}), w), Equals(message("float_indices")));
  REQUIRE_THROWS_WITH(F::embedding(ember::tensor({1.0}).to(kFloat64), w), Equals(message("double_indices")));
  REQUIRE_THROWS_WITH(F::embedding(ember::tensor({1.0}).to(kBool), w), Equals(message("bool_indices")));
  REQUIRE_THROWS_WITH(F::embedding(ember::tensor({1.0}).to(kUInt8), w), Equals(message("uint8_indices")));
  REQUIRE_THROWS_AS(F::embedding(long_tensor({1, 5}), w), IndexError);
  REQUIRE_THROWS_WITH(F::embedding(long_tensor({1, 5}), w), Equals(message("index_out_of_range")));
  REQUIRE_THROWS_WITH(F::embedding(long_tensor({-1}), w), Equals(message("negative_index")));
  REQUIRE_THROWS_AS(ember::embedding(ember::randn({5}), long_tensor({1})), ShapeError);
  REQUIRE_THROWS_WITH(ember::embedding(ember::randn({5}), long_tensor({1})), Equals(message("weight_1d")));
  REQUIRE_THROWS_WITH(ember::embedding(ember::randn({5, 3, 2}), long_tensor({1})), Equals(message("weight_3d")));
  REQUIRE_THROWS_WITH(ember::embedding(ember::randn({}), long_tensor({1})), Equals(message("weight_1d")));
  REQUIRE_THROWS_AS(F::embedding(long_tensor({1}), w, 5), ValueError);
  REQUIRE_THROWS_WITH(F::embedding(long_tensor({1}), w, 5), Equals(message("padding_too_large")));
  REQUIRE_THROWS_WITH(F::embedding(long_tensor({1}), w, -6), Equals(message("padding_too_small")));
  REQUIRE_THROWS_WITH(nn::Embedding(nn::EmbeddingOptions(5, 3).padding_idx(5)), Equals(message("module_padding")));
  REQUIRE_THROWS_WITH(nn::Embedding(nn::EmbeddingOptions(5, 3).padding_idx(-6)),
                      Equals(message("module_padding_negative")));
  REQUIRE_THROWS_AS(nn::Embedding(-1, 3), ValueError);
  // The native backward: PyTorch's dtype message, and ember's own checks of what PyTorch
  // leaves unchecked (an index past num_weights would write outside grad_weight).
  REQUIRE_THROWS_WITH(native::embedding_backward(ember::randn({2, 3}), ember::tensor({1.0, 2.0}), 5, -1),
                      Equals(message("backward_float_indices")));
  REQUIRE_THROWS_AS(native::embedding_backward(ember::randn({2, 3}), long_tensor({1, 5}), 5, -1), IndexError);
  REQUIRE_THROWS_WITH(native::embedding_backward(ember::randn({2, 3}), long_tensor({1, 5}), 5, -1),
                      Equals("embedding_backward(): index 5 is out of range for num_weights 5"));
  REQUIRE_THROWS_AS(native::embedding_backward(ember::randn({3, 3}), long_tensor({1, 2}), 5, -1), ShapeError);
  REQUIRE_THROWS_AS(native::embedding_backward(ember::randn({2, 3}).to(kInt64), long_tensor({1, 2}), 5, -1),
                    DTypeError);
  REQUIRE_THROWS_AS(native::embedding_backward(ember::randn({2, 3}), long_tensor({1, 2}), -1, -1), ValueError);
}
