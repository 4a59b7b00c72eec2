// tests/autograd/test_triangular.cpp — ember::tril / ember::triu (autograd/triangular_ops.cpp)
// against torch.tril / torch.triu (tests/reference/gen_triangular.py -> triangular.json):
// values for float, int64 and bool inputs, 2-D to 4-D and empty shapes, diagonals beyond the
// matrix on both sides; gradients (TrilBackward0 / TriuBackward0), gradcheck in float64, a
// non-contiguous input, extreme diagonals, the reference loops, and PyTorch's error.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>

#include <ember/autograd/gradcheck.h>
#include <ember/core/kernel_mode.h>
#include <ember/ember.h>

#include "test_support.h"

using namespace ember;
using ember::testing::load_reference;
using ember::testing::tensor_from_json;
using ember::testing::to_vector;

namespace {

const nlohmann::json& reference() {
  static const nlohmann::json ref = load_reference("triangular.json");
  return ref;
}

void require_same(const Tensor& actual, const nlohmann::json& expected) {
  const Tensor wanted = tensor_from_json(expected);
  REQUIRE(actual.sizes() == wanted.sizes());
  REQUIRE(actual.dtype() == wanted.dtype());
  REQUIRE(to_vector(actual) == to_vector(wanted));  // selecting and zeroing is exact
}

void check_all_cases() {
  for (const auto& c : reference()["cases"]) {
    const Tensor x = tensor_from_json(c["x"]);
    const std::int64_t diagonal = c["diagonal"];
    INFO("shape " << c["x"]["shape"] << " dtype " << c["x"]["dtype"] << " diagonal " << diagonal);
    require_same(ember::tril(x, diagonal), c["tril"]);
    require_same(ember::triu(x, diagonal), c["triu"]);
    if (!c.contains("grad")) continue;
    const Tensor grad = tensor_from_json(c["grad"]);
    for (const char* name : {"tril", "triu"}) {
      Tensor leaf = x.detach().requires_grad_(true);
      Tensor y = std::string(name) == "tril" ? ember::tril(leaf, diagonal) : ember::triu(leaf, diagonal);
      REQUIRE(y.grad_fn()->name() == (std::string(name) == "tril" ? "TrilBackward0" : "TriuBackward0"));
      (y * grad).sum().backward();
      require_same(leaf.grad(), c[std::string("grad_") + name]);
    }
  }
}

}  // namespace

TEST_CASE("tril and triu match PyTorch for every dtype, shape and diagonal", "[autograd][tril]") {
  check_all_cases();
}

TEST_CASE("tril and triu match PyTorch on the reference loops", "[autograd][tril][reference]") {
  KernelModeGuard reference_mode(KernelMode::Reference);
  check_all_cases();
}

TEST_CASE("tril and triu read non-contiguous inputs and take any diagonal", "[autograd][tril]") {
  const Tensor base = ember::arange(1, 25, 1, ember::dtype(DType::Float64)).view({4, 6});
  const Tensor strided = base.t().slice(0, 0, 6, 2);  // [3, 4], strides (2, 6)
  REQUIRE_FALSE(strided.is_contiguous());
  const Tensor dense = strided.contiguous();
  for (std::int64_t diagonal : {-3, -1, 0, 2}) {
    REQUIRE(to_vector(ember::tril(strided, diagonal)) == to_vector(ember::tril(dense, diagonal)));
    REQUIRE(to_vector(ember::triu(strided, diagonal)) == to_vector(ember::triu(dense, diagonal)));
  }
  // Diagonals far past the matrix: everything or nothing, without overflowing i + diagonal.
  const std::int64_t huge = std::numeric_limits<std::int64_t>::max(), tiny = std::numeric_limits<std::int64_t>::min();
  REQUIRE(to_vector(ember::tril(dense, huge)) == to_vector(dense));
  REQUIRE(ember::tril(dense, tiny).abs().sum().item<double>() == 0.0);
  REQUIRE(to_vector(ember::triu(dense, tiny)) == to_vector(dense));
  REQUIRE(ember::triu(dense, huge).abs().sum().item<double>() == 0.0);
}

TEST_CASE("tril and triu pass gradcheck in float64", "[autograd][tril][gradcheck]") {
  manual_seed(3);
  Tensor x = ember::randn({2, 3, 4}, ember::dtype(DType::Float64)).requires_grad_(true);
  for (std::int64_t diagonal : {-1, 0, 1}) {
    REQUIRE(autograd::gradcheck([diagonal](const autograd::TensorList& in) { return ember::tril(in[0], diagonal); }, {x}));
    REQUIRE(autograd::gradcheck([diagonal](const autograd::TensorList& in) { return ember::triu(in[0], diagonal); }, {x}));
    REQUIRE(autograd::gradgradcheck([diagonal](const autograd::TensorList& in) { return ember::tril(in[0], diagonal) * in[0]; }, {x}));
  }
}

TEST_CASE("tril and triu refuse fewer than two dims with PyTorch's message", "[autograd][tril]") {
  REQUIRE_THROWS_AS(ember::tril(ember::ones({3})), ShapeError);
  REQUIRE_THROWS_WITH(ember::tril(ember::ones({3})), reference()["errors"]["tril"].get<std::string>());
  REQUIRE_THROWS_WITH(ember::triu(ember::ones({})), reference()["errors"]["triu"].get<std::string>());
}
