// core/element_math.h — the scalar arithmetic every element function is built from, defined
// once for the CPU loops, the CUDA kernels and the emulator (EMBER_HOST_DEVICE).
//
// Three things C++ leaves undefined and PyTorch's users still meet, given one meaning here:
//   - integer overflow: int64 / int32 arithmetic wraps modulo 2^N, as PyTorch's tensors do
//     on every machine it runs on (the operation is done in the unsigned type, where C++
//     defines the wrap-around; the conversion back is modular since C++20);
//   - a floating value cast to an integer dtype that cannot hold it (NaN, ±inf, 1e20):
//     PyTorch calls it undefined; on x86 its CPU kernels give the hardware's "integer
//     indefinite" value, and `convert` below reproduces exactly that, so ember's answer is
//     PyTorch's on the machines the tutorial targets, on the CPU and on the GPU alike;
//   - negative or huge floats to uint8: through the same 32-bit conversion, so -1.0 -> 255.
// The C library's float and double functions (expf/exp, ...) exist under the same names in
// CUDA device code, so picking by type gives one spelling for every backend.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include <ember/core/host_device.h>
#include <ember/core/reduced_float.h>

namespace ember::math {

template <class T> EMBER_HOST_DEVICE EMBER_INLINE T exp(T x) {
  if constexpr (std::is_same_v<T, float>) return ::expf(x); else return ::exp(x);
}
template <class T> EMBER_HOST_DEVICE EMBER_INLINE T log(T x) {
  if constexpr (std::is_same_v<T, float>) return ::logf(x); else return ::log(x);
}
template <class T> EMBER_HOST_DEVICE EMBER_INLINE T sqrt(T x) {
  if constexpr (std::is_same_v<T, float>) return ::sqrtf(x); else return ::sqrt(x);
}
template <class T> EMBER_HOST_DEVICE EMBER_INLINE T tanh(T x) {
  if constexpr (std::is_same_v<T, float>) return ::tanhf(x); else return ::tanh(x);
}
template <class T> EMBER_HOST_DEVICE EMBER_INLINE T erf(T x) {
  if constexpr (std::is_same_v<T, float>) return ::erff(x); else return ::erf(x);
}
template <class T> EMBER_HOST_DEVICE EMBER_INLINE T pow(T x, T y) {
  if constexpr (std::is_same_v<T, float>) return ::powf(x, y); else return ::pow(x, y);
}
template <class T> EMBER_HOST_DEVICE EMBER_INLINE T fabs(T x) {
  if constexpr (std::is_same_v<T, float>) return ::fabsf(x); else return ::fabs(x);
}
template <class T> EMBER_HOST_DEVICE EMBER_INLINE bool isnan(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    return x != x;
  } else if constexpr (is_reduced_float_v<T>) {
    const float value = x;
    return value != value;
  } else {
    return false;
  }
}

// ------------------------------------------------------------------ wrapping integers

// The unsigned type integer arithmetic on T is carried out in (T itself for floats and bool).
template <class T, bool = std::is_integral_v<T> && !std::is_same_v<T, bool>>
struct wrap_type { using type = T; };
template <class T>
struct wrap_type<T, true> { using type = std::make_unsigned_t<T>; };
template <class T>
using wrap_t = typename wrap_type<T>::type;

// a + b, a - b, a * b, -a: IEEE for floats; modulo 2^N for integers (PyTorch's int64 tensors
// wrap: torch.tensor([2**62]) * 4 == 0).
template <class T> EMBER_HOST_DEVICE EMBER_INLINE T add(T a, T b) {
  return static_cast<T>(static_cast<wrap_t<T>>(a) + static_cast<wrap_t<T>>(b));
}
template <class T> EMBER_HOST_DEVICE EMBER_INLINE T sub(T a, T b) {
  return static_cast<T>(static_cast<wrap_t<T>>(a) - static_cast<wrap_t<T>>(b));
}
template <class T> EMBER_HOST_DEVICE EMBER_INLINE T mul(T a, T b) {
  return static_cast<T>(static_cast<wrap_t<T>>(a) * static_cast<wrap_t<T>>(b));
}
// a·b + c. Floats: rounded once (a fused multiply-add), as PyTorch 2.x's vectorised CPU
// kernels (Vectorized::fmadd) and the GPU compute torch.add's alpha; integers: wrapping.
template <class T> EMBER_HOST_DEVICE EMBER_INLINE T fma(T a, T b, T c) {
  if constexpr (std::is_same_v<T, float>) return ::fmaf(a, b, c);
  else if constexpr (std::is_same_v<T, double>) return ::fma(a, b, c);
  else return add(mul(a, b), c);
}
template <class T> EMBER_HOST_DEVICE EMBER_INLINE T neg(T a) {
  if constexpr (std::is_floating_point_v<T>) return -a;  // flips the sign bit: -(+0.0) = -0.0
  else return static_cast<T>(wrap_t<T>(0) - static_cast<wrap_t<T>>(a));
}

// Integer power by squaring, exact modulo 2^N (std::pow through double would round).
// Negative exponents: only 1 and -1 have integer reciprocals; every other base gives 0
// (native:: refuses them for integer tensors, as PyTorch: this is the backends' fallback).
template <class T> EMBER_HOST_DEVICE EMBER_INLINE T int_pow(T base, std::int64_t exponent) {
  if constexpr (std::is_same_v<T, bool>) {
    return exponent == 0 ? true : base;
  } else {
    if (exponent < 0) {
      if (base == T(1)) return T(1);
      if constexpr (std::is_signed_v<T>) {
        if (base == T(-1)) return (exponent % 2 == 0) ? T(1) : T(-1);
      }
      return T(0);
    }
    T result = T(1);
    while (exponent > 0) {
      if (exponent & 1) result = mul(result, base);
      base = mul(base, base);
      exponent >>= 1;
    }
    return result;
  }
}

// ------------------------------------------------------------------ conversions

// A floating value truncated toward zero into the signed integer type Wide (int32 or
// int64), as x86's cvttss2si / cvttsd2si: NaN and anything outside Wide's range give Wide's
// minimum (the hardware's "integer indefinite"), where a plain static_cast is undefined.
template <class Wide, class From> EMBER_HOST_DEVICE EMBER_INLINE Wide truncate_to(From x) {
  // -2^(N-1) and 2^(N-1) are exact in float and double; the comparisons are false for NaN.
  constexpr From lowest = -static_cast<From>(static_cast<wrap_t<Wide>>(1) << (8 * sizeof(Wide) - 1));
  if (x >= lowest && x < -lowest) return static_cast<Wide>(x);
  return static_cast<Wide>(static_cast<wrap_t<Wide>>(1) << (8 * sizeof(Wide) - 1));
}

// The element conversion of copy_ and .to(dtype), and of a number entering a tensor:
//   to bool: any nonzero value (NaN too) is true;
//   floating to int64: truncate_to<int64_t>;
//   floating to int32, int16, int8, uint8: truncate_to<int32_t>, then the low bits (so
//     -1.0 -> 255 in uint8 and 300.0 -> 44, and inf -> 0), which is the code PyTorch's
//     static_cast compiles to on x86;
//   integers to narrower integers: the low bits (two's complement); everything else is exact
//   or rounds to nearest, as static_cast;
//   bfloat16 and float16 go through float both ways, as c10's conversions do: a double or an
//   int64 is rounded to float, then to 16 bits (two roundings, PyTorch's result).
template <class To, class From> EMBER_HOST_DEVICE EMBER_INLINE To convert(From x) {
  if constexpr (std::is_same_v<To, From>) {
    return x;  // a copy keeps the bits (a 16-bit NaN's payload too, which a trip through float would not)
  } else if constexpr (is_reduced_float_v<From>) {
    return convert<To>(static_cast<float>(x));
  } else if constexpr (is_reduced_float_v<To>) {
    return To(static_cast<float>(x));
  } else if constexpr (std::is_same_v<To, bool>) {
    return x != From(0);
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    if constexpr (sizeof(To) == 8) return static_cast<To>(truncate_to<std::int64_t>(x));
    else return static_cast<To>(truncate_to<std::int32_t>(x));
  } else {
    return static_cast<To>(x);
  }
}

}  // namespace ember::math
