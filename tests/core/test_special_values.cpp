// tests/core/test_special_values.cpp — PyTorch's answers at the edges of every dtype, bit for bit.
//
// The cases come from tests/reference/gen_special_values.py: NaN, ±inf, ±0, denormals, the
// integer extremes, values no integer dtype holds. They pin down what C++ leaves undefined
// or loose (integer overflow wraps, float-to-integer casts give x86's answer) and the IEEE
// corners (abs(-0.0) = +0.0, -(0.0) = -0.0, sign(NaN) = 0, relu(NaN) = NaN, pow(-inf, 0.5) =
// NaN). Compared exactly: the sign of a zero, every bit of an int64, NaN where PyTorch has
// NaN; only the rounding of transcendental functions may differ by an ulp (allowed_ulps). Each case also runs inside a
// 67-element tensor, so the vectorised loops meet the same values as the scalar tails.
// The CUDA kernels instantiate the same element functions (core/element_functions.h); the
// emulated-kernel tests compare them with these CPU results on the same inputs.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iomanip>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <ember/core/native.h>

#include "test_support.h"

using namespace ember;
using nlohmann::json;

namespace {

Scalar number(const json& value) {
  if (value.is_number_integer()) return Scalar(value.get<std::int64_t>());
  return Scalar(value.get<double>());
}

Tensor run_op(const std::string& op, const std::vector<Tensor>& args, const json& c) {
  const Tensor& x = args[0];
  if (op == "neg") return native::neg(x);
  if (op == "abs") return native::abs(x);
  if (op == "sign") return native::sign(x);
  if (op == "relu") return native::relu(x);
  if (op == "exp") return native::exp(x);
  if (op == "log") return native::log(x);
  if (op == "sqrt") return native::sqrt(x);
  if (op == "sigmoid") return native::sigmoid(x);
  if (op == "tanh") return native::tanh(x);
  if (op == "clamp") {
    std::optional<Scalar> low, high;
    if (!c["min"].is_null()) low = number(c["min"]);
    if (!c["max"].is_null()) high = number(c["max"]);
    return native::clamp(x, low, high);
  }
  if (op == "pow_scalar") return native::pow(x, number(c["exponent"]));
  if (op == "to_dtype") return native::to_dtype(x, testing::dtype_from_name(c["dtype"]));
  if (op == "mm") return native::mm(x, args[1]);
  if (op == "sum") return native::reshape(native::sum(x, {}, false), {1});
  if (op == "prod") return native::reshape(native::prod(x, {}, false), {1});
  const Tensor& y = args[1];
  if (op == "add") return native::add(x, y, c.contains("alpha") ? number(c["alpha"]) : Scalar(1));
  if (op == "sub") return native::sub(x, y);
  if (op == "mul") return native::mul(x, y);
  if (op == "div") return native::div(x, y);
  if (op == "pow") return native::pow(x, y);
  if (op == "maximum") return native::maximum(x, y);
  if (op == "minimum") return native::minimum(x, y);
  if (op == "eq") return native::eq(x, y);
  if (op == "ne") return native::ne(x, y);
  if (op == "lt") return native::lt(x, y);
  if (op == "le") return native::le(x, y);
  if (op == "gt") return native::gt(x, y);
  if (op == "ge") return native::ge(x, y);
  if (op == "logical_and") return native::logical_and(x, y);
  throw std::runtime_error("unknown op " + op);
}

// How many units in the last place a finite, nonzero result may differ from PyTorch's.
// Exact ops must match bit for bit. Transcendental functions may differ by one rounding:
// ember calls the C library (sqrt correctly rounded), PyTorch's CPU kernels use their own
// vectorised approximations (its float32 sqrt(3e9) is 54772.2578, one ulp above the true
// 54772.2558's nearest float). And a + alpha * b: PyTorch 2.15's AVX2 kernel fuses it into one
// FMA, ember rounds the product and the sum (the composite path its fused SGD step matches
// bit for bit; docs/reliability.md, "Known gaps"). Every NaN, infinity and zero is exact.
int allowed_ulps(const std::string& op, const json& c) {
  for (const char* approximate : {"sqrt", "exp", "log", "sigmoid", "tanh", "pow"})
    if (op == approximate) return 1;
  if (op == "pow_scalar") {
    const double exponent = c["exponent"].get<double>();
    return exponent == 2.0 || exponent == 3.0 || exponent == -1.0 || exponent == -2.0 ? 0 : 1;
  }
  if (op == "add" && c.contains("alpha")) return 1;
  return 0;
}

// The distance in ulps between two finite floats of the same sign.
template <class T>
std::int64_t ulps_apart(T a, T b) {
  using Bits = std::conditional_t<sizeof(T) == 4, std::int32_t, std::int64_t>;
  Bits x, y;
  std::memcpy(&x, &a, sizeof(T));
  std::memcpy(&y, &b, sizeof(T));
  return x > y ? static_cast<std::int64_t>(x) - y : static_cast<std::int64_t>(y) - x;
}

// The first expected.numel() elements of `actual` equal `expected`: same dtype, the same bits
// for integers, zeros (so -0.0 differs from +0.0) and infinities, NaN where expected has NaN,
// and finite floats within max_ulps (0: the same bits).
void require_same_bits(const Tensor& actual, const Tensor& expected, int max_ulps) {
  REQUIRE(dtype_name(actual.dtype()) == dtype_name(expected.dtype()));
  REQUIRE(actual.numel() >= expected.numel());
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
        if (max_ulps > 0 && std::isfinite(w[i]) && w[i] != 0 && std::isfinite(g[i]) &&
            std::signbit(g[i]) == std::signbit(w[i])) {
          CHECK(ulps_apart(g[i], w[i]) <= max_ulps);
          continue;
        }
      }
      CHECK(std::memcmp(&g[i], &w[i], sizeof(scalar_t)) == 0);
    }
  });
}

bool is_cast(const std::string& op) { return op == "to_dtype"; }
bool is_reduction(const std::string& op) { return op == "sum" || op == "prod" || op == "mm"; }

// x repeated to 67 elements (the generator's check that PyTorch's vector loops agree).
Tensor repeated(const Tensor& x) {
  const std::int64_t n = x.numel(), copies = (67 + n - 1) / n;
  Tensor tiled = native::reshape(native::expand(native::reshape(x, {1, n}), {copies, n}), {copies * n});
  return native::slice(tiled, 0, 0, 67, 1);
}

void run_cases(const std::function<bool(const std::string&)>& wanted) {
  static const json reference = testing::load_reference("special_values.json");
  int count = 0;
  for (std::size_t i = 0; i < reference["cases"].size(); ++i) {
    const json& c = reference["cases"][i];
    const std::string op = c["op"];
    if (!wanted(op)) continue;
    std::vector<Tensor> args, long_args;
    for (const json& a : c["args"]) args.push_back(testing::tensor_from_json(a));
    const Tensor expected = testing::tensor_from_json(c["result"]);
    INFO("case " << i << ": " << op << " on " << dtype_name(args[0].dtype()) << " " << c.dump().substr(0, 200));
    const int max_ulps = allowed_ulps(op, c);
    require_same_bits(run_op(op, args, c), expected, max_ulps);
    if (!is_reduction(op)) {
      for (const Tensor& a : args) long_args.push_back(repeated(a));
      require_same_bits(run_op(op, long_args, c), expected, max_ulps);
    }
    ++count;
  }
  REQUIRE(count > 0);
}


}  // namespace

TEST_CASE("special values: elementwise ops give PyTorch's bits for NaN, ±0, ±inf, denormals and integer extremes",
          "[elementwise][special]") {
  run_cases([](const std::string& op) { return !is_cast(op) && !is_reduction(op); });
}

TEST_CASE("special values: casts of NaN, ±inf and out-of-range values give PyTorch's (x86) results",
          "[elementwise][special][copy]") {
  run_cases(is_cast);
}

TEST_CASE("special values: integer sums, products and matrix products wrap as PyTorch's", "[reduce][special]") {
  run_cases(is_reduction);
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
