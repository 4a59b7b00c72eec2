// cuda/kernels/elementwise_ops.cuh — the functors of every elementwise op, and the dtype /
// op dispatch that picks one and hands it to launch_elementwise (elementwise.cuh).
//
// Adding an op = one functor here + one `case` in the matching dispatch function. The
// semantics follow PyTorch: NaN propagates through maximum/minimum/clamp/relu, bool
// arithmetic is logical, comparisons produce bool. native:: has already checked dtypes
// and promoted operands, so the backend only sees combinations that make sense.
// Bound: memory bandwidth (see elementwise.cuh).
#pragma once

#include <cstdint>
#include <type_traits>

#include <ember/core/backend.h>
#include <ember/core/error.h>
#include <ember/cuda/kernels/device_math.cuh>
#include <ember/cuda/kernels/elementwise.cuh>
#include <ember/cuda/kernels/relu_backward.cuh>

EMBER_KERNELS_BEGIN

// ------------------------------------------------------------------ nullary and casts
template <class T> struct FillOp {
  T value;
  EMBER_HOST_DEVICE T operator()() const { return value; }
};

template <class To, class From> struct CastOp {
  EMBER_HOST_DEVICE To operator()(From x) const {
    if constexpr (std::is_same_v<To, bool>) return x != From(0);  // any nonzero is true
    else return static_cast<To>(x);
  }
};

// ------------------------------------------------------------------ unary
template <class T> struct NegOp {
  EMBER_HOST_DEVICE T operator()(T x) const {
    if constexpr (std::is_same_v<T, bool>) return !x; else return static_cast<T>(-x);
  }
};
template <class T> struct AbsOp {
  EMBER_HOST_DEVICE T operator()(T x) const {
    if constexpr (std::is_unsigned_v<T> || std::is_same_v<T, bool>) return x;
    else if constexpr (std::is_floating_point_v<T>) return x < T(0) || x == T(0) ? T(0) - x : x;  // abs(-0.0) = +0.0
    else return x < T(0) ? static_cast<T>(-x) : x;
  }
};
template <class T> struct SignOp {
  EMBER_HOST_DEVICE T operator()(T x) const {
    if constexpr (std::is_same_v<T, bool>) return x;
    else if constexpr (std::is_unsigned_v<T>) return static_cast<T>(x != T(0));
    else if (math::isnan(x)) return x;
    else return static_cast<T>((T(0) < x) - (x < T(0)));
  }
};
template <class T> struct ReluOp {
  EMBER_HOST_DEVICE T operator()(T x) const {
    if constexpr (std::is_unsigned_v<T> || std::is_same_v<T, bool>) return x;
    else if (math::isnan(x)) return x;
    else return x > T(0) ? x : T(0);
  }
};
template <class T> struct ExpOp { EMBER_HOST_DEVICE T operator()(T x) const { return math::exp(x); } };
template <class T> struct LogOp { EMBER_HOST_DEVICE T operator()(T x) const { return math::log(x); } };
template <class T> struct SqrtOp { EMBER_HOST_DEVICE T operator()(T x) const { return math::sqrt(x); } };
template <class T> struct TanhOp { EMBER_HOST_DEVICE T operator()(T x) const { return math::tanh(x); } };
template <class T> struct SigmoidOp {
  EMBER_HOST_DEVICE T operator()(T x) const { return T(1) / (T(1) + math::exp(-x)); }
};
template <class T> struct ClampOp {
  T low, high;
  bool has_low, has_high;
  EMBER_HOST_DEVICE T operator()(T x) const {
    if (math::isnan(x)) return x;
    if (has_low && x < low) x = low;
    if (has_high && x > high) x = high;
    return x;
  }
};
template <class T> struct PowScalarOp {
  double exponent;
  EMBER_HOST_DEVICE T operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>) return math::pow(x, static_cast<T>(exponent));
    else return math::int_pow(x, static_cast<long long>(exponent));
  }
};

// ------------------------------------------------------------------ binary
template <class T> struct AddOp {
  T alpha;
  EMBER_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a || (alpha && b);
    else return static_cast<T>(a + alpha * b);
  }
};
template <class T> struct SubOp {
  T alpha;
  EMBER_HOST_DEVICE T operator()(T a, T b) const { return static_cast<T>(a - alpha * b); }
};
template <class T> struct MulOp {
  EMBER_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a && b; else return static_cast<T>(a * b);
  }
};
template <class T> struct DivOp {
  EMBER_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) return a / b;
    else return b == T(0) ? T(0) : static_cast<T>(a / b);  // integer /0 would trap; native promotes anyway
  }
};
template <class T> struct PowOp {
  EMBER_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) return math::pow(a, b);
    else return math::int_pow(a, static_cast<long long>(b));
  }
};
template <class T> struct MaximumOp {
  EMBER_HOST_DEVICE T operator()(T a, T b) const {
    if (math::isnan(a)) return a;
    if (math::isnan(b)) return b;
    return a > b ? a : b;
  }
};
template <class T> struct MinimumOp {
  EMBER_HOST_DEVICE T operator()(T a, T b) const {
    if (math::isnan(a)) return a;
    if (math::isnan(b)) return b;
    return a < b ? a : b;
  }
};
template <class T> struct EqOp { EMBER_HOST_DEVICE bool operator()(T a, T b) const { return a == b; } };
template <class T> struct NeOp { EMBER_HOST_DEVICE bool operator()(T a, T b) const { return a != b; } };
template <class T> struct LtOp { EMBER_HOST_DEVICE bool operator()(T a, T b) const { return a < b; } };
template <class T> struct LeOp { EMBER_HOST_DEVICE bool operator()(T a, T b) const { return a <= b; } };
template <class T> struct GtOp { EMBER_HOST_DEVICE bool operator()(T a, T b) const { return a > b; } };
template <class T> struct GeOp { EMBER_HOST_DEVICE bool operator()(T a, T b) const { return a >= b; } };
template <class T> struct LogicalAndOp {
  EMBER_HOST_DEVICE bool operator()(T a, T b) const { return a != T(0) && b != T(0); }
};

template <class T> struct WhereOp {
  EMBER_HOST_DEVICE T operator()(bool condition, T a, T b) const { return condition ? a : b; }
};

// ------------------------------------------------------------------ dispatch
inline void dispatch_fill(const StridedPlan& plan, Scalar value, cudaStream_t stream) {
  EMBER_DISPATCH_ALL(plan.dtypes[0], launch_elementwise<scalar_t>(plan, FillOp<scalar_t>{value.to<scalar_t>()}, stream));
}

// dst <- cast(src): every pair of dtypes (6 × 6 instantiations of the same kernel).
inline void dispatch_copy(const StridedPlan& plan, cudaStream_t stream) {
  EMBER_DISPATCH_ALL(plan.dtypes[0], {
    using To = scalar_t;
    EMBER_DISPATCH_ALL(plan.dtypes[1], launch_elementwise<To, scalar_t>(plan, CastOp<To, scalar_t>{}, stream));
  });
}

template <class T>
void unary_for_type(UnaryOp op, const StridedPlan& plan, const UnaryParams& params, cudaStream_t stream) {
  switch (op) {
    case UnaryOp::Neg: return launch_elementwise<T, T>(plan, NegOp<T>{}, stream);
    case UnaryOp::Abs: return launch_elementwise<T, T>(plan, AbsOp<T>{}, stream);
    case UnaryOp::Sign: return launch_elementwise<T, T>(plan, SignOp<T>{}, stream);
    case UnaryOp::Relu: return launch_elementwise<T, T>(plan, ReluOp<T>{}, stream);
    case UnaryOp::Clamp:
      return launch_elementwise<T, T>(plan, ClampOp<T>{params.low_as<T>(), params.high_as<T>(),
                                                       params.has_low, params.has_high}, stream);
    case UnaryOp::PowScalar: return launch_elementwise<T, T>(plan, PowScalarOp<T>{params.exponent}, stream);
    default: break;
  }
  if constexpr (std::is_floating_point_v<T>) {
    switch (op) {
      case UnaryOp::Exp: return launch_elementwise<T, T>(plan, ExpOp<T>{}, stream);
      case UnaryOp::Log: return launch_elementwise<T, T>(plan, LogOp<T>{}, stream);
      case UnaryOp::Sqrt: return launch_elementwise<T, T>(plan, SqrtOp<T>{}, stream);
      case UnaryOp::Sigmoid: return launch_elementwise<T, T>(plan, SigmoidOp<T>{}, stream);
      case UnaryOp::Tanh: return launch_elementwise<T, T>(plan, TanhOp<T>{}, stream);
      default: break;
    }
  }
  throw DTypeError(make_message("CUDA backend: unary op ", static_cast<int>(op), " not implemented for '",
                                scalar_type_name(plan.dtypes[0]), "'"));
}

inline void dispatch_unary(UnaryOp op, const StridedPlan& plan, const UnaryParams& params, cudaStream_t stream) {
  EMBER_DISPATCH_ALL(plan.dtypes[1], unary_for_type<scalar_t>(op, plan, params, stream));
}

template <class T>
void binary_for_type(BinaryOp op, const StridedPlan& plan, Scalar alpha, cudaStream_t stream) {
  const T a = alpha.to<T>();
  switch (op) {
    case BinaryOp::Add: return launch_elementwise<T, T, T>(plan, AddOp<T>{a}, stream);
    case BinaryOp::Sub:
      if constexpr (!std::is_same_v<T, bool>) return launch_elementwise<T, T, T>(plan, SubOp<T>{a}, stream);
      break;
    case BinaryOp::Mul: return launch_elementwise<T, T, T>(plan, MulOp<T>{}, stream);
    case BinaryOp::Div:
      if constexpr (!std::is_same_v<T, bool>) return launch_elementwise<T, T, T>(plan, DivOp<T>{}, stream);
      break;
    case BinaryOp::Pow:
      if constexpr (!std::is_same_v<T, bool>) return launch_elementwise<T, T, T>(plan, PowOp<T>{}, stream);
      break;
    case BinaryOp::Maximum: return launch_elementwise<T, T, T>(plan, MaximumOp<T>{}, stream);
    case BinaryOp::Minimum: return launch_elementwise<T, T, T>(plan, MinimumOp<T>{}, stream);
    case BinaryOp::ReluBackward:  // relu_backward.cuh
      if constexpr (!std::is_same_v<T, bool>) return launch_elementwise<T, T, T>(plan, ReluBackwardOp<T>{}, stream);
      break;
    case BinaryOp::Eq: return launch_elementwise<bool, T, T>(plan, EqOp<T>{}, stream);
    case BinaryOp::Ne: return launch_elementwise<bool, T, T>(plan, NeOp<T>{}, stream);
    case BinaryOp::Lt: return launch_elementwise<bool, T, T>(plan, LtOp<T>{}, stream);
    case BinaryOp::Le: return launch_elementwise<bool, T, T>(plan, LeOp<T>{}, stream);
    case BinaryOp::Gt: return launch_elementwise<bool, T, T>(plan, GtOp<T>{}, stream);
    case BinaryOp::Ge: return launch_elementwise<bool, T, T>(plan, GeOp<T>{}, stream);
    case BinaryOp::LogicalAnd: return launch_elementwise<bool, T, T>(plan, LogicalAndOp<T>{}, stream);
  }
  throw DTypeError(make_message("CUDA backend: binary op ", static_cast<int>(op), " not implemented for '",
                                scalar_type_name(plan.dtypes[1]), "'"));
}

// Operand 1's dtype is the computation's (operand 0 is Bool for comparisons).
inline void dispatch_binary(BinaryOp op, const StridedPlan& plan, Scalar alpha, cudaStream_t stream) {
  EMBER_DISPATCH_ALL(plan.dtypes[1], binary_for_type<scalar_t>(op, plan, alpha, stream));
}

inline void dispatch_where(const StridedPlan& plan, cudaStream_t stream) {
  EMBER_DISPATCH_ALL(plan.dtypes[0], (launch_elementwise<scalar_t, bool, scalar_t, scalar_t>(plan, WhereOp<scalar_t>{}, stream)));
}

EMBER_KERNELS_END
