// tests/core/test_special_values.cpp — PyTorch's answers for integer and special-value
// reductions, bit for bit.
//
// The cases come from tests/reference/gen_special_values.py: sums and products over NaN, ±inf,
// ±0, denormals and the integer extremes, and integer matrix products that overflow. They pin
// down what C++ leaves undefined (integer overflow wraps modulo 2^N, as PyTorch's). The
// elementwise ops and casts at the same edges are in the conformance sweep
// (tests/conformance/, tests/reference/gen_conformance.py), which runs them on every backend
// and layout against PyTorch.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <iomanip>
#include <string>
#include <type_traits>
#include <vector>

#include <ember/core/native.h>

#include "test_support.h"

using namespace ember;
using nlohmann::json;

namespace {

Tensor run_op(const std::string& op, const std::vector<Tensor>& args) {
  const Tensor& x = args[0];
  if (op == "mm") return native::mm(x, args[1]);
  if (op == "sum") return native::reshape(native::sum(x, {}, false), {1});
  if (op == "prod") return native::reshape(native::prod(x, {}, false), {1});
  throw std::runtime_error("unknown op " + op);
}

// `actual` equals `expected` bit for bit: same dtype, the same bits for integers, zeros (so
// -0.0 differs from +0.0) and infinities, NaN where expected has NaN.
void require_same_bits(const Tensor& actual, const Tensor& expected) {
  REQUIRE(dtype_name(actual.dtype()) == dtype_name(expected.dtype()));
  REQUIRE(actual.numel() == expected.numel());
  const Tensor got = native::contiguous(actual);
  EMBER_DISPATCH_ALL(expected.dtype(), {
    const auto* g = got.data_ptr<scalar_t>();
    const auto* w = expected.data_ptr<scalar_t>();
    for (std::int64_t i = 0; i < expected.numel(); ++i) {
      INFO("element " << i << ": got " << std::setprecision(17) << +g[i] << ", want " << +w[i]);
      if constexpr (std::is_floating_point_v<scalar_t>) {
        if (std::isnan(w[i])) {
          CHECK(std::isnan(g[i]));
          continue;
        }
      }
      CHECK(std::memcmp(&g[i], &w[i], sizeof(scalar_t)) == 0);
    }
  });
}

void run_cases() {
  static const json reference = testing::load_reference("special_values.json");
  int count = 0;
  for (std::size_t i = 0; i < reference["cases"].size(); ++i) {
    const json& c = reference["cases"][i];
    const std::string op = c["op"];
    std::vector<Tensor> args;
    for (const json& a : c["args"]) args.push_back(testing::tensor_from_json(a));
    const Tensor expected = testing::tensor_from_json(c["result"]);
    INFO("case " << i << ": " << op << " on " << dtype_name(args[0].dtype()) << " " << c.dump().substr(0, 200));
    require_same_bits(run_op(op, args), expected);
    ++count;
  }
  REQUIRE(count > 0);
}

}  // namespace

TEST_CASE("special values: integer sums, products and matrix products wrap as PyTorch's", "[reduce][special]") {
  run_cases();
}

TEST_CASE("special values: a number entering a tensor converts as an element does", "[elementwise][special][scalar]") {
  // Scalar::to is math::convert: the value a fill or an alpha takes is the cast's.
  CHECK(Scalar(-1.0).to<std::uint8_t>() == 255);
  CHECK(Scalar(300.0).to<std::uint8_t>() == 44);
  CHECK(Scalar(std::nan("")).to<std::int64_t>() == INT64_MIN);
  CHECK(Scalar(1e20).to<std::int32_t>() == INT32_MIN);
  CHECK(Scalar(-2.9).to<std::int64_t>() == -2);
  CHECK(Scalar(std::int64_t{1} << 40).to<std::int32_t>() == 0);  // the low 32 bits
  CHECK(Scalar(std::nan("")).to<bool>());
}
