// core/box_muller.cpp — PyTorch's vectorised Box–Muller, one lane at a time.
//
// Split out of core/random.cpp (which owns the generator and the sampling paths). The
// float32 version evaluates the same Cephes-style polynomials as PyTorch's AVX2 code, with
// std::fma exactly where the vector code fuses, so randn(16+) matches torch bit for bit.
#include <ember/core/box_muller.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numbers>

// The bits depend on exactly which multiply-adds are fused (written out with std::fma) and
// which are not: forbid the compiler from fusing others on its own.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace ember::detail {

namespace {

// --- float32 normal_fill: PyTorch's x86 build transforms 16 floats at a time with AVX2 and
// the Cephes-style polynomial approximations of log, sin and cos (single precision, every
// multiply-add fused by the compiler). To reproduce its bits we evaluate the same
// polynomials one lane at a time, with std::fma wherever the vector code fuses.
std::uint32_t float_bits(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}
float float_from_bits(std::uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// log(x) for x in (0, 1]: split x = m · 2^e with m in [sqrt(1/2), sqrt(2)), then a degree-9
// polynomial in (m - 1), plus e·log(2) split into two parts for accuracy.
float polynomial_log(float x) {
  x = std::max(x, float_from_bits(0x00800000U));  // smallest normal float: no denormals
  float exponent = static_cast<float>(static_cast<std::int32_t>(float_bits(x) >> 23) - 0x7f) + 1.0f;
  x = float_from_bits((float_bits(x) & ~0x7f800000U) | float_bits(0.5f));  // mantissa in [0.5, 1)
  if (x < 0.707106781186547524f) {
    exponent -= 1.0f;
    x = (x - 1.0f) + x;
  } else {
    x = x - 1.0f;
  }
  const float z = x * x;
  float y = 7.0376836292e-2f;
  for (float coefficient : {-1.1514610310e-1f, 1.1676998740e-1f, -1.2420140846e-1f, 1.4249322787e-1f,
                            -1.6668057665e-1f, 2.0000714765e-1f, -2.4999993993e-1f, 3.3333331174e-1f}) {
    y = std::fma(y, x, coefficient);
  }
  y = std::fma(y * x, z, exponent * -2.12194440e-4f);
  y = std::fma(z, -0.5f, y);
  x = x + y;
  return std::fma(exponent, 0.693359375f, x);
}

// sin and cos of x >= 0 together: reduce x by multiples of pi/4 (pi/4 split in three parts),
// then pick the sine or cosine polynomial per octant and fix the signs.
void polynomial_sincos(float x, float* sine, float* cosine) {
  std::uint32_t sine_sign = float_bits(x) & 0x80000000U;
  x = std::fabs(x);
  auto octant = static_cast<std::int32_t>(x * 1.27323954473516f);  // x · 4/pi, truncated
  octant = (octant + 1) & ~1;
  const float y = static_cast<float>(octant);
  const std::uint32_t swap_sine_sign = static_cast<std::uint32_t>(octant & 4) << 29;
  const bool use_cosine_poly_for_sine = (octant & 2) != 0;
  x = std::fma(y, -0.78515625f, x);
  x = std::fma(y, -2.4187564849853515625e-4f, x);
  x = std::fma(y, -3.77489497744594108e-8f, x);
  const std::uint32_t cosine_sign = static_cast<std::uint32_t>(~(octant - 2) & 4) << 29;
  sine_sign ^= swap_sine_sign;

  const float z = x * x;
  float cos_poly = 2.443315711809948e-5f;
  cos_poly = std::fma(cos_poly, z, -1.388731625493765e-3f);
  cos_poly = std::fma(cos_poly, z, 4.166664568298827e-2f);
  cos_poly = std::fma(cos_poly * z, z, -(z * 0.5f));
  cos_poly = cos_poly + 1.0f;
  float sin_poly = -1.9515295891e-4f;
  sin_poly = std::fma(sin_poly, z, 8.3321608736e-3f);
  sin_poly = std::fma(sin_poly, z, -1.6666654611e-1f);
  sin_poly = sin_poly * z;
  sin_poly = std::fma(sin_poly, x, x);

  const float sine_value = use_cosine_poly_for_sine ? cos_poly : sin_poly;
  const float cosine_value = use_cosine_poly_for_sine ? sin_poly : cos_poly;
  *sine = float_from_bits(float_bits(sine_value) ^ sine_sign);
  *cosine = float_from_bits(float_bits(cosine_value) ^ cosine_sign);
}

}  // namespace

// Turns 16 uniforms in place into 16 normals: pairs (j, j + 8) go through Box–Muller.
void box_muller_16(float* data, float mean, float std) {
  const auto two_pi = static_cast<float>(2.0 * std::numbers::pi);
  for (int j = 0; j < 8; ++j) {
    const float u1 = 1.0f - data[j];  // (0, 1]: safe for log
    const float u2 = data[j + 8];
    const float radius = std::sqrt(-2.0f * polynomial_log(u1));
    float sine, cosine;
    polynomial_sincos(two_pi * u2, &sine, &cosine);
    data[j] = std::fma(radius * cosine, std, mean);
    data[j + 8] = std::fma(radius * sine, std, mean);
  }
}
void box_muller_16(double* data, double mean, double std) {
  for (int j = 0; j < 8; ++j) {
    const double u1 = 1.0 - data[j];
    const double u2 = data[j + 8];
    const double radius = std::sqrt(-2.0 * std::log(u1));
    const double theta = 2.0 * std::numbers::pi * u2;
    data[j] = std::fma(radius * std::cos(theta), std, mean);
    data[j + 8] = std::fma(radius * std::sin(theta), std, mean);
  }
}

}  // namespace ember::detail
