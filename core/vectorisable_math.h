// core/vectorisable_math.h — float erf and exp written as plain arithmetic, for GELU.
//
// GELU's exact form, x·Φ(x) = ½x(1 + erf(x/√2)), and its derivative Φ(x) + x·φ(x) need erf
// and exp for every element. The C library's erff and expf are calls GCC cannot vectorise,
// so the GELU loops ran one element at a time and were a fifth of a GPT training step
// (docs/performance.md, "The GPT"). These two functions compute the same values from
// additions, multiplications, one division and bit operations, with selects instead of
// branches, so the loops of core/cpu/elementwise_kernels.cpp vectorise; and since they are
// element functions like any other, the CPU loops, the reference loops and the CUDA kernels
// all run them and round alike. PyTorch's own float GELU is a polynomial too (oneDNN's
// forward, a vectorised erf and exp in the backward), so ember's results stay within the
// distance the conformance sweep already allows between ember and PyTorch.
//
// Accuracy, float32, evaluated without fused multiply-add as written here (measured over
// 5M arguments by scripts/fit_element_polynomials.py, which also fitted the coefficients):
//   vectorisable_erf: at most 6 ulps from the correctly rounded erf;
//   vectorisable_exp: at most 1 ulp from the correctly rounded exp, subnormal results
//                     included; overflow gives +inf and underflow 0, as expf.
// NaN in gives NaN out. Only float has these: double keeps the C library (gradcheck).
#pragma once

#include <bit>
#include <cstdint>

#include <ember/core/host_device.h>

namespace ember::math {

EMBER_HOST_DEVICE EMBER_INLINE std::uint32_t float_bits(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  return std::bit_cast<std::uint32_t>(x);
#endif
}
EMBER_HOST_DEVICE EMBER_INLINE float float_from_bits(std::uint32_t bits) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(bits);
#else
  return std::bit_cast<float>(bits);
#endif
}

// erf(x) = x·P(s)/Q(s) with s = x²/16: a rational fit of erf(x)/x on |x| ≤ 3.925, beyond
// which erf(x) rounds to ±1 in float (the clamp, then the final clamp to [-1, 1], give
// exactly ±1 there). Dividing s by 16 (exact) keeps the coefficients near 1..100.
EMBER_HOST_DEVICE EMBER_INLINE float vectorisable_erf(float x) {
  constexpr float kLimit = 3.925f;
  // Comparisons are false for NaN, so NaN passes both clamps and propagates.
  const float below_limit = x > kLimit ? kLimit : x;  // two plain selects, not a nested one:
  const float clamped = below_limit < -kLimit ? -kLimit : below_limit;  // GCC vectorises these
  const float s = clamped * clamped * 0.0625f;
  float p = 0x1.12e0eap+1f;
  p = p * s + 0x1.2aab96p+4f;
  p = p * s + 0x1.edeafp+3f;
  p = p * s + 0x1.b02e2cp+3f;
  p = p * s + 0x1.861bf2p+1f;
  p = p * s + 0x1.20dd74p+0f;  // 2/√π, erf's slope at 0
  float q = 0x1.3f55f2p+5f;
  q = q * s + 0x1.30decap+6f;
  q = q * s + 0x1.eaafe4p+5f;
  q = q * s + 0x1.d382ecp+4f;
  q = q * s + 0x1.011902p+3f;
  q = q * s + 1.0f;
  const float result = clamped * p / q;
  const float at_most_one = result > 1.0f ? 1.0f : result;
  return at_most_one < -1.0f ? -1.0f : at_most_one;
}

// exp(x) = 2^n · exp(r), n = round(x / ln 2), r = x - n·ln 2 (in two parts, so r is exact
// to float precision), exp(r) = 1 + r + r²·E(r) on |r| ≤ ln(2)/2. The clamp to [-110, 89]
// keeps n in [-159, 129]; 2^n is applied as two halves so that results below the smallest
// normal float come out subnormal and results above the largest come out +inf.
EMBER_HOST_DEVICE EMBER_INLINE float vectorisable_exp(float x) {
  const float at_most_89 = x > 89.0f ? 89.0f : x;
  const float clamped = at_most_89 < -110.0f ? -110.0f : at_most_89;
  // Adding 1.5·2^23 rounds to an integer, which then sits in the low mantissa bits.
  constexpr float kRoundingMagic = 12582912.0f;
  const float shifted = clamped * 1.44269504088896341f + kRoundingMagic;
  const float n = shifted - kRoundingMagic;
  const float r = (clamped - n * 0.693145751953125f) - n * 1.428606765330187e-06f;  // ln 2 = hi + lo
  float e = 0x1.6a2444p-10f;
  e = e * r + 0x1.1239d6p-7f;
  e = e * r + 0x1.5558f2p-5f;
  e = e * r + 0x1.555492p-3f;
  e = e * r + 0x1.fffffcp-2f;
  const float polynomial = e * r * r + r + 1.0f;
  // n as an integer, from the bits of `shifted` (no float-to-int conversion: NaN stays
  // harmless here, and its polynomial is already NaN). Unsigned, so the shifts are defined.
  const std::uint32_t k = float_bits(shifted) - float_bits(kRoundingMagic);  // n mod 2^32
  const std::uint32_t half = static_cast<std::uint32_t>(static_cast<std::int32_t>(k) >> 1);
  const float scale_1 = float_from_bits((half + 127u) << 23);
  const float scale_2 = float_from_bits((k - half + 127u) << 23);
  return polynomial * scale_1 * scale_2;
}

}  // namespace ember::math
