// tests/support/reduced_float_cases.h — running and checking the 16-bit float cases of
// tests/reference/reduced_float.json (issue 22), shared by the core test and the
// cross-backend one (tests/core/test_reduced_float.cpp, tests/conformance/test_reduced_float_backends.cpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <ember/core/kernel_mode.h>
#include <ember/core/native.h>

#include "test_support.h"

namespace ember::testing {

// tests/reference/reduced_float.json, read once.
inline const nlohmann::json& reduced_float_reference() {
  static const nlohmann::json data = load_reference("reduced_float.json");
  return data;
}

// The 16-bit value nearest above |x| minus |x|: one unit in the last place of the format.
inline double ulp_of(DType dtype, double x) {
  const int mantissa_bits = dtype == kBFloat16 ? 7 : 10;
  int exponent = 0;
  std::frexp(x == 0.0 ? 1.0 : x, &exponent);
  if (dtype == kFloat16) exponent = std::max(exponent, -13);  // subnormals: a fixed 2^-24
  return std::ldexp(1.0, exponent - 1 - mantissa_bits);
}

// actual equals expected: same dtype, and values equal (NaN where NaN; the sign of zero
// and of infinity included), or within `ulps` units of the 16-bit format.
inline void require_matches(const Tensor& actual, const Tensor& expected, double ulps = 0.0) {
  REQUIRE(dtype_name(actual.dtype()) == dtype_name(expected.dtype()));
  REQUIRE(actual.sizes() == expected.sizes());
  const std::vector<double> got = testing::to_vector(actual), want = testing::to_vector(expected);
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", want " << want[i]);
    if (std::isnan(want[i])) {
      REQUIRE(std::isnan(got[i]));
    } else if (ulps == 0.0 || std::isinf(want[i])) {
      REQUIRE(got[i] == want[i]);
      REQUIRE(std::signbit(got[i]) == std::signbit(want[i]));
    } else {
      REQUIRE(std::fabs(got[i] - want[i]) <= ulps * ulp_of(expected.dtype(), want[i]));
    }
  }
}

// actual within one unit of the 16-bit format at `scale` (or at the expected value, if larger)
// of expected: for results that cancel, whose own last place is far below their inputs'.
inline void require_matches_at_scale(const Tensor& actual, const Tensor& expected, double scale) {
  REQUIRE(actual.dtype() == expected.dtype());
  REQUIRE(actual.sizes() == expected.sizes());
  const std::vector<double> got = to_vector(actual), want = to_vector(expected);
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", want " << want[i]);
    REQUIRE(std::fabs(got[i] - want[i]) <= ulp_of(expected.dtype(), std::max(std::fabs(want[i]), scale)));
  }
}

// Runs the op named in a case on its arguments (one or two tensors).
inline Tensor run_elementwise(const std::string& op, const std::vector<Tensor>& args) {
  const Tensor& a = args[0];
  if (op == "neg") return native::neg(a);
  if (op == "abs") return native::abs(a);
  if (op == "relu") return native::relu(a);
  if (op == "exp") return native::exp(a);
  if (op == "tanh") return native::tanh(a);
  if (op == "sigmoid") return native::sigmoid(a);
  if (op == "gelu") return native::gelu(a);
  if (op == "silu") return native::silu(a);
  if (op == "erf") return native::erf(a);
  if (op == "square") return native::pow(a, 2);
  if (op == "pow_1_5") return native::pow(a, 1.5);
  if (op == "clamp") return native::clamp(a, Scalar(-1.1), Scalar(2.3));
  if (op == "log") return native::log(a);
  if (op == "sqrt") return native::sqrt(a);
  if (op == "rsqrt") return native::rsqrt(a);
  if (op == "reciprocal") return native::pow(a, -1.0);
  if (op == "add_scalar") return native::add(a, scalar_to_tensor(0.1));
  if (op == "mul_scalar") return native::mul(a, scalar_to_tensor(3));
  const Tensor& b = args[1];
  if (op == "add") return native::add(a, b);
  if (op == "sub") return native::sub(a, b);
  if (op == "mul") return native::mul(a, b);
  if (op == "div") return native::div(a, b);
  if (op == "add_alpha") return native::add(a, b, 0.3);
  if (op == "sub_alpha") return native::sub(a, b, 3);
  if (op == "maximum") return native::maximum(a, b);
  if (op == "minimum") return native::minimum(a, b);
  if (op == "pow") return native::pow(a, b);
  if (op == "eq") return native::eq(a, b);
  if (op == "lt") return native::lt(a, b);
  if (op == "ge") return native::ge(a, b);
  throw std::runtime_error("unknown op " + op);
}

// Ops whose float32 result comes from a transcendental function: PyTorch's (SLEEF,
// vectorised) and the C library's may differ in float32's last bit, which can move the
// rounded 16-bit result by one unit.
inline bool is_transcendental(const std::string& op) {
  for (const char* name : {"exp", "tanh", "sigmoid", "gelu", "silu", "erf", "log", "pow", "pow_1_5"})
    if (op == name) return true;
  return false;
}

// How far an op's 16-bit result may be from PyTorch's, in units of the format: 0 (the same
// bits) for arithmetic, 1 where the float32 result comes from a transcendental function
// (above).
inline double elementwise_ulps(const std::string& op) { return is_transcendental(op) ? 1.0 : 0.0; }

// PyTorch's result for an elementwise case of reduced_float.json. gelu(±inf) is NaN or the
// limit (inf, 0) in PyTorch depending on which of its kernels runs (2.15: NaN for the
// bfloat16 case, inf for float16 and for a float32 tensor that requires grad). ember gives
// the limit everywhere; there the expected value is ember's own float32 gelu, rounded.
inline Tensor expected_elementwise(const nlohmann::json& c, const std::vector<Tensor>& args) {
  Tensor expected = tensor_from_json(c["result"]);
  if (c["op"] == "gelu") {
    const Tensor from_float32 = native::to_dtype(native::gelu(native::to_dtype(args[0], kFloat32)), expected.dtype());
    const Tensor at_infinity = native::eq(native::abs(args[0]), scalar_to_tensor(INFINITY));
    expected = native::where(at_infinity, from_float32, expected);
  }
  return expected;
}

// Runs body on the fast loops and on the reference loops (core/kernel_mode.h).
template <class Body>
void on_both_paths(const Body& body) {
  for (KernelMode mode : {KernelMode::Fast, KernelMode::Reference}) {
    KernelModeGuard guard(mode);
    INFO("kernels: " << (mode == KernelMode::Fast ? "fast" : "reference"));
    body();
  }
}

}  // namespace ember::testing
