// core/element_functions.h — what every elementwise op does to one element, defined once.
//
// Tutorial §2 (tensor operations). An elementwise op is a loop over a StridedPlan (the
// backend's business) around one of these functors (the op's meaning). The CPU loops
// (core/cpu/elementwise_kernels.cpp) and the CUDA kernels (cuda/kernels/elementwise_ops.cuh,
// also run by the emulator) instantiate the same functor, so the backends cannot disagree
// about NaN, -0.0, overflow or casts. The semantics are PyTorch's:
//   - NaN propagates through maximum, minimum, clamp and relu; sign(NaN) = 0 (torch.sign);
//   - abs(-0.0) = +0.0, sign(-0.0) = +0.0, relu(-0.0) = -0.0 (what torch gives);
//   - integer arithmetic wraps modulo 2^N (core/element_math.h);
//   - bool arithmetic is logical (True + True = True), comparisons produce bool.
// native:: has already checked dtypes and promoted operands: a functor only ever sees the
// combinations that make sense (Div, Exp, Log, ... see floating types only).
// bfloat16 and float16 elements are computed in float: the backends instantiate a functor
// for opmath_t<T> and wrap it with in_opmath<T> (at the end of this file), so a 16-bit
// result is rounded once, from the float result, as PyTorch's kernels round it.
#pragma once

#include <cstdint>
#include <type_traits>

#include <ember/core/element_math.h>
#include <ember/core/host_device.h>
#include <ember/core/vectorisable_math.h>

namespace ember::element {

template <class T>
constexpr bool is_bool_v = std::is_same_v<T, bool>;

// ------------------------------------------------------------------ nullary and casts

template <class T> struct Fill {
  T value;
  EMBER_HOST_DEVICE T operator()() const { return value; }
};

template <class To, class From> struct Cast {
  EMBER_HOST_DEVICE To operator()(From x) const { return math::convert<To>(x); }
};

// ------------------------------------------------------------------ unary

template <class T> struct Neg {  // bool has no negation in PyTorch; native refuses it
  EMBER_HOST_DEVICE T operator()(T x) const {
    if constexpr (is_bool_v<T>) return !x; else return math::neg(x);
  }
};

template <class T> struct Abs {
  EMBER_HOST_DEVICE T operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>) return math::fabs(x);  // clears the sign bit: abs(-0.0) = +0.0
    else if constexpr (std::is_signed_v<T>) return x < T(0) ? math::neg(x) : x;  // abs(INT64_MIN) wraps to itself
    else return x;  // uint8 and bool are never negative
  }
};

template <class T> struct Sign {
  EMBER_HOST_DEVICE T operator()(T x) const {
    if constexpr (is_bool_v<T>) return x;
    else if constexpr (std::is_unsigned_v<T>) return static_cast<T>(x != T(0));
    else return static_cast<T>((T(0) < x) - (x < T(0)));  // both comparisons false for NaN: 0
  }
};

template <class T> struct Relu {
  EMBER_HOST_DEVICE T operator()(T x) const {
    if constexpr (!std::is_signed_v<T>) return x;  // uint8 and bool
    else return x < T(0) ? T(0) : x;  // false for NaN and -0.0: both pass, as in torch.relu
  }
};

template <class T> struct Exp { EMBER_HOST_DEVICE T operator()(T x) const { return math::exp(x); } };
template <class T> struct Log { EMBER_HOST_DEVICE T operator()(T x) const { return math::log(x); } };
template <class T> struct Sqrt { EMBER_HOST_DEVICE T operator()(T x) const { return math::sqrt(x); } };
template <class T> struct Tanh { EMBER_HOST_DEVICE T operator()(T x) const { return math::tanh(x); } };
template <class T> struct Sigmoid {
  EMBER_HOST_DEVICE T operator()(T x) const { return T(1) / (T(1) + math::exp(-x)); }
};
template <class T> struct Rsqrt { EMBER_HOST_DEVICE T operator()(T x) const { return T(1) / math::sqrt(x); } };
template <class T> struct Erf { EMBER_HOST_DEVICE T operator()(T x) const { return math::erf(x); } };

// GELU (Hendrycks & Gimpel), x·Φ(x) with Φ the standard normal CDF: torch.nn.functional.gelu.
// The constants and the order of the operations are PyTorch's (its scalar CPU kernel), so
// the roundings match.
// (Products of C's M_SQRT2, M_2_SQRTPI, M_SQRT1_2 rounded once to T, as PyTorch writes them.)
template <class T> struct GeluConstants {
  static constexpr double kSqrt2 = 1.41421356237309504880, kTwoOverSqrtPi = 1.12837916709551257390;
  static constexpr T kSqrt1_2 = T(0.70710678118654752440);                   // 1/√2
  static constexpr T kSqrt2OverPi = T(kSqrt2 * kTwoOverSqrtPi * 0.5);          // √(2/π)
  static constexpr T k1OverSqrt2Pi = T(kTwoOverSqrtPi * 0.70710678118654752440 * 0.5);  // 1/√(2π)
  static constexpr T kKappa = T(0.044715);
};
// GELU's erf and exp: in float, the arithmetic forms of core/vectorisable_math.h, so the
// GELU loops vectorise (and every backend still rounds alike); in double, the C library's.
template <class T> EMBER_HOST_DEVICE EMBER_INLINE T gelu_erf(T x) {
  if constexpr (std::is_same_v<T, float>) return math::vectorisable_erf(x); else return math::erf(x);
}
template <class T> EMBER_HOST_DEVICE EMBER_INLINE T gelu_exp(T x) {
  if constexpr (std::is_same_v<T, float>) return math::vectorisable_exp(x); else return math::exp(x);
}
template <class T> struct Gelu {  // approximate="none": x · ½(1 + erf(x/√2))
  EMBER_HOST_DEVICE T operator()(T x) const {
    return x * T(0.5) * (T(1) + gelu_erf(x * GeluConstants<T>::kSqrt1_2));
  }
};
template <class T> struct GeluTanh {  // approximate="tanh": ½x(1 + tanh(√(2/π)(x + 0.044715x³)))
  EMBER_HOST_DEVICE T operator()(T x) const {
    using C = GeluConstants<T>;
    const T inner = C::kSqrt2OverPi * (x + C::kKappa * (x * x * x));
    return T(0.5) * x * (T(1) + math::tanh(inner));
  }
};
// SiLU (swish), x·σ(x): torch.nn.functional.silu.
template <class T> struct Silu {
  EMBER_HOST_DEVICE T operator()(T x) const { return x / (T(1) + math::exp(-x)); }
};

// min(max(x, low), high): when low > high every element becomes high, as torch.clamp.
template <class T> struct Clamp {
  T low, high;
  bool has_low, has_high;
  EMBER_HOST_DEVICE T operator()(T x) const {
    if (math::isnan(x)) return x;
    if (has_low && x < low) x = low;
    if (has_high && x > high) x = high;
    return x;
  }
};

// x ** exponent for a number exponent. Floating tensors take PyTorch's shortcuts for the
// common exponents (its pow_tensor_scalar kernel), which round differently from powf and
// differ at the edges: pow(-inf, 0.5) is sqrt(-inf) = NaN, not +inf.
template <class T> struct Square { EMBER_HOST_DEVICE T operator()(T x) const { return math::mul(x, x); } };
template <class T> struct Cube { EMBER_HOST_DEVICE T operator()(T x) const { return math::mul(math::mul(x, x), x); } };
template <class T> struct Reciprocal { EMBER_HOST_DEVICE T operator()(T x) const { return T(1) / x; } };
template <class T> struct InverseSquare { EMBER_HOST_DEVICE T operator()(T x) const { return T(1) / (x * x); } };
template <class T> struct PowScalar {
  double exponent;
  EMBER_HOST_DEVICE T operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>) return math::pow(x, static_cast<T>(exponent));
    else return math::int_pow(x, math::convert<std::int64_t>(exponent));
  }
};

// Calls loop(functor) with the functor x ** exponent runs as: the one place both backends
// choose it, so they take the same shortcut for the same exponent.
template <class T, class Loop>
void with_pow_scalar(double exponent, const Loop& loop) {
  if (exponent == 2.0) return loop(Square<T>{});
  if (exponent == 3.0) return loop(Cube<T>{});
  if constexpr (std::is_floating_point_v<T>) {
    if (exponent == 0.5) return loop(Sqrt<T>{});
    if (exponent == -0.5) return loop(Rsqrt<T>{});
    if (exponent == -1.0) return loop(Reciprocal<T>{});
    if (exponent == -2.0) return loop(InverseSquare<T>{});
  }
  loop(PowScalar<T>{exponent});
}

// ------------------------------------------------------------------ binary

// a + b, and a + alpha * b (torch.add's alpha; Sub is Add with -alpha, which gives the same
// bits: negation is exact). Floats round a + alpha * b once (math::fma), as PyTorch 2.15's CPU
// kernels and the GPU do (measured: the unfused sum differs in 18 % of float32 elements).
// Bool: logical or.
template <class T> struct Add {
  EMBER_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (is_bool_v<T>) return a || b; else return math::add(a, b);
  }
};
template <class T> struct AddScaled {
  T alpha;
  EMBER_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (is_bool_v<T>) return a || (alpha && b); else return math::fma(alpha, b, a);
  }
};
template <class T> struct Sub {
  EMBER_HOST_DEVICE T operator()(T a, T b) const { return math::sub(a, b); }
};
template <class T> struct Mul {
  EMBER_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (is_bool_v<T>) return a && b; else return math::mul(a, b);
  }
};
template <class T> struct Div {  // true division: floating types only (native promotes integers)
  static_assert(std::is_floating_point_v<T>, "Div is defined on floating types");
  EMBER_HOST_DEVICE T operator()(T a, T b) const { return a / b; }
};
template <class T> struct Pow {
  EMBER_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) return math::pow(a, b);
    else return math::int_pow(a, static_cast<std::int64_t>(b));
  }
};
template <class T> struct Maximum {
  EMBER_HOST_DEVICE T operator()(T a, T b) const {
    if (math::isnan(a)) return a;
    if (math::isnan(b)) return b;
    return a > b ? a : b;
  }
};
template <class T> struct Minimum {
  EMBER_HOST_DEVICE T operator()(T a, T b) const {
    if (math::isnan(a)) return a;
    if (math::isnan(b)) return b;
    return a < b ? a : b;
  }
};

// ReLU's backward, PyTorch's threshold_backward(grad, result, 0): the gradient passes where
// relu's result is positive and is 0 elsewhere, including at exactly 0; a NaN result passes
// it (`NaN <= 0` is false), as in PyTorch.
template <class T> struct ReluBackward {
  EMBER_HOST_DEVICE T operator()(T grad_output, T result) const { return result <= T(0) ? T(0) : grad_output; }
};

// The backward kernels: grad · f'(x) in one pass, PyTorch's formulas (tanh_backward,
// gelu_backward, silu_backward). x is what the derivative row saves: tanh's result, the
// input of gelu and silu.
template <class T> struct TanhBackward {  // 1 - tanh²
  EMBER_HOST_DEVICE T operator()(T grad_output, T result) const { return grad_output * (T(1) - result * result); }
};
template <class T> struct GeluBackward {  // Φ(x) + x·φ(x)
  EMBER_HOST_DEVICE T operator()(T grad_output, T x) const {
    using C = GeluConstants<T>;
    const T cdf = T(0.5) * (T(1) + gelu_erf(x * C::kSqrt1_2));
    const T pdf = C::k1OverSqrt2Pi * gelu_exp(x * x * T(-0.5));
    return grad_output * (cdf + x * pdf);
  }
};
template <class T> struct GeluTanhBackward {
  EMBER_HOST_DEVICE T operator()(T grad_output, T x) const {
    using C = GeluConstants<T>;
    const T x_squared = x * x;
    const T inner = C::kSqrt2OverPi * (x + C::kKappa * (x_squared * x));
    const T tanh_inner = math::tanh(inner);
    const T left = T(0.5) * x;
    const T left_derivative = T(0.5) * (T(1) + tanh_inner);
    const T tanh_derivative = T(1) - tanh_inner * tanh_inner;
    const T inner_derivative = C::kSqrt2OverPi * (T(1) + T(3) * C::kKappa * x_squared);
    return grad_output * (left_derivative + left * tanh_derivative * inner_derivative);
  }
};
template <class T> struct SiluBackward {  // σ(x)·(1 + x·(1 - σ(x)))
  EMBER_HOST_DEVICE T operator()(T grad_output, T x) const {
    const T sigmoid = T(1) / (T(1) + math::exp(-x));
    return grad_output * sigmoid * (T(1) + x * (T(1) - sigmoid));
  }
};

template <class T> struct Eq { EMBER_HOST_DEVICE bool operator()(T a, T b) const { return a == b; } };
template <class T> struct Ne { EMBER_HOST_DEVICE bool operator()(T a, T b) const { return a != b; } };
template <class T> struct Lt { EMBER_HOST_DEVICE bool operator()(T a, T b) const { return a < b; } };
template <class T> struct Le { EMBER_HOST_DEVICE bool operator()(T a, T b) const { return a <= b; } };
template <class T> struct Gt { EMBER_HOST_DEVICE bool operator()(T a, T b) const { return a > b; } };
template <class T> struct Ge { EMBER_HOST_DEVICE bool operator()(T a, T b) const { return a >= b; } };
template <class T> struct LogicalAnd {
  EMBER_HOST_DEVICE bool operator()(T a, T b) const { return a != T(0) && b != T(0); }
};

// ------------------------------------------------------------------ ternary

template <class T> struct Where {
  EMBER_HOST_DEVICE T operator()(bool condition, T a, T b) const { return condition ? a : b; }
};

// ------------------------------------------------------------------ 16-bit floats

// A functor F made for float, applied to bfloat16 or float16 elements: the inputs widen to
// float (exactly), F runs in float, and a floating result is rounded to T once (a comparison's
// bool passes through).
template <class T, class F> struct InOpmath {
  F f;
  template <class... Elements>
  EMBER_HOST_DEVICE auto operator()(Elements... elements) const {
    const auto result = f(static_cast<opmath_t<T>>(elements)...);
    if constexpr (std::is_same_v<std::remove_const_t<decltype(result)>, bool>) return result;
    else return T(result);
  }
};
// f itself when T computes in its own type; InOpmath<T, F> for the 16-bit floats.
template <class T, class F> EMBER_HOST_DEVICE auto in_opmath(F f) {
  if constexpr (std::is_same_v<T, opmath_t<T>>) return f;
  else return InOpmath<T, F>{f};
}

}  // namespace ember::element
