// core/reduced_float.h — the 16-bit floating types: bfloat16 and float16 (PyTorch:
// torch.bfloat16 / c10::BFloat16 and torch.float16 / c10::Half).
//
// Mixed precision (docs/mixed-precision.md). Both formats keep a sign bit and spend the
// other 15 bits differently:
//
//   float32   1 sign | 8 exponent | 23 mantissa
//   bfloat16  1 sign | 8 exponent |  7 mantissa   float32's range, 3 significant digits
//   float16   1 sign | 5 exponent | 10 mantissa   range ±65504, subnormals below 2^-14
//
// A bfloat16 is the top half of a float32, so widening is a shift and narrowing rounds away
// the low 16 bits. float16 needs its exponent re-biased and has its own overflow (to inf)
// and subnormal ranges.
//
// These types are *storage* formats: arithmetic converts to float (the implicit conversion
// below), computes there, and rounds once when the result is stored, as PyTorch does (its
// "opmath" type). Narrowing rounds to nearest, ties to even, on every path; a double or an
// integer narrows through float first (two roundings), exactly as c10's conversions do.
// The conversions are written with integer operations only, so they give the same bits
// on the CPU, on a GPU and in the emulator whatever the floating-point environment
// (flush-to-zero included).
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include <ember/core/host_device.h>

namespace ember {

namespace reduced_float {

EMBER_HOST_DEVICE EMBER_INLINE std::uint32_t bits_of(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}
EMBER_HOST_DEVICE EMBER_INLINE float float_from_bits(std::uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// float32 -> bfloat16 bits, round to nearest even: adding 0x7FFF plus the lowest kept bit
// carries into the kept half exactly when the dropped half is above one half, or equal to
// it with the kept half odd. A carry out of the mantissa bumps the exponent, which is the
// right answer (up to inf for the largest finite floats). Every NaN becomes the quiet NaN
// 0x7FC0, as c10::BFloat16's scalar conversion gives (PyTorch's vectorised CPU path gives
// 0xFFFF instead; both are NaN).
EMBER_HOST_DEVICE EMBER_INLINE std::uint16_t bfloat16_bits_from_float(float value) {
  const std::uint32_t bits = bits_of(value);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return 0x7FC0;
  const std::uint32_t rounding_bias = 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>((bits + rounding_bias) >> 16);
}
EMBER_HOST_DEVICE EMBER_INLINE float float_from_bfloat16_bits(std::uint16_t bits) {
  return float_from_bits(static_cast<std::uint32_t>(bits) << 16);
}

// float32 -> float16 bits, round to nearest even. NaN keeps its sign and becomes the quiet
// NaN 0x7E00; anything at or above 65520 (halfway past the largest half, 65504) becomes inf;
// below 2^-14 the result is a subnormal (a multiple of 2^-24), rounded from the full 24-bit
// significand.
EMBER_HOST_DEVICE EMBER_INLINE std::uint16_t float16_bits_from_float(float value) {
  const std::uint32_t bits = bits_of(value);
  const std::uint16_t sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  const std::uint32_t magnitude = bits & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) return sign | 0x7E00u;   // NaN
  if (magnitude >= 0x477FF000u) return sign | 0x7C00u;  // >= 65520, and inf: inf
  const std::uint32_t exponent = magnitude >> 23;       // float's biased exponent
  if (exponent < 113) {                                 // below 2^-14: a subnormal half, or 0
    // value = significand * 2^(exponent - 150); in units of 2^-24 that is
    // significand >> (126 - exponent), rounded to nearest even.
    if (exponent == 0) return sign;  // float subnormals are far below half's smallest (2^-24)
    const std::uint32_t significand = (magnitude & 0x7FFFFFu) | 0x800000u;
    const std::uint32_t shift = 126 - exponent;  // 14 .. 125
    if (shift > 24) return sign;                 // below 2^-25: rounds to 0
    std::uint32_t units = significand >> shift;
    const std::uint32_t remainder = significand & ((1u << shift) - 1u), half = 1u << (shift - 1);
    if (remainder > half || (remainder == half && (units & 1u))) ++units;  // may reach 0x400: the smallest normal
    return static_cast<std::uint16_t>(sign | units);
  }
  // A normal half: re-bias the exponent (127 -> 15) and round away 13 mantissa bits, the same
  // carry trick as bfloat16 (a carry into the exponent is again the right answer).
  const std::uint32_t rebiased = magnitude - (112u << 23);
  const std::uint32_t rounded = rebiased + 0xFFFu + ((rebiased >> 13) & 1u);
  return static_cast<std::uint16_t>(sign | (rounded >> 13));
}
EMBER_HOST_DEVICE EMBER_INLINE float float_from_float16_bits(std::uint16_t half) {
  const std::uint32_t sign = static_cast<std::uint32_t>(half & 0x8000u) << 16;
  std::uint32_t exponent = (half >> 10) & 0x1Fu;
  std::uint32_t mantissa = half & 0x3FFu;
  if (exponent == 0x1F) {  // inf; a NaN keeps its payload and comes out quiet, as in c10
    return float_from_bits(sign | 0x7F800000u | (mantissa << 13) | (mantissa != 0 ? 0x400000u : 0u));
  }
  if (exponent == 0) {
    if (mantissa == 0) return float_from_bits(sign);  // ±0
    // A subnormal, mantissa * 2^-24: shift the leading 1 up to the implicit position.
    exponent = 113;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --exponent;
    }
    return float_from_bits(sign | (exponent << 23) | ((mantissa & 0x3FFu) << 13));
  }
  return float_from_bits(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

}  // namespace reduced_float

// A bfloat16 element. Trivially copyable and uninitialised by default, like float, so
// tensors of it are plain arrays; converts to and from float implicitly, as c10::BFloat16.
struct BFloat16 {
  std::uint16_t bits;

  BFloat16() = default;
  EMBER_HOST_DEVICE BFloat16(float value) : bits(reduced_float::bfloat16_bits_from_float(value)) {}  // NOLINT
  EMBER_HOST_DEVICE operator float() const { return reduced_float::float_from_bfloat16_bits(bits); }  // NOLINT

  static constexpr BFloat16 from_bits(std::uint16_t bits) {
    BFloat16 value{};
    value.bits = bits;
    return value;
  }
};

// A float16 element (IEEE 754 binary16).
struct Half {
  std::uint16_t bits;

  Half() = default;
  EMBER_HOST_DEVICE Half(float value) : bits(reduced_float::float16_bits_from_float(value)) {}  // NOLINT
  EMBER_HOST_DEVICE operator float() const { return reduced_float::float_from_float16_bits(bits); }  // NOLINT

  static constexpr Half from_bits(std::uint16_t bits) {
    Half value{};
    value.bits = bits;
    return value;
  }
};

// The element types stored in 16 bits and computed in float.
template <class T>
inline constexpr bool is_reduced_float_v = false;
template <> inline constexpr bool is_reduced_float_v<BFloat16> = true;
template <> inline constexpr bool is_reduced_float_v<Half> = true;

// float, double, and the 16-bit floats: what std::is_floating_point_v says for the first two.
template <class T>
inline constexpr bool is_floating_v = std::is_floating_point_v<T> || is_reduced_float_v<T>;

// The type an element is computed in (PyTorch's opmath_type): float for the 16-bit floats,
// the type itself otherwise.
template <class T> struct opmath { using type = T; };
template <> struct opmath<BFloat16> { using type = float; };
template <> struct opmath<Half> { using type = float; };
template <class T> using opmath_t = typename opmath<T>::type;

}  // namespace ember
