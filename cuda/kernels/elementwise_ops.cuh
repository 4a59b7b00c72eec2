// cuda/kernels/elementwise_ops.cuh — the dtype / op dispatch of every elementwise op: it
// picks the op's element functor and hands it to launch_elementwise (elementwise.cuh).
//
// The functors themselves are core/element_functions.h's, the very ones the CPU loops
// instantiate (core/cpu/elementwise_kernels.cpp), so NaN, -0.0, integer overflow and casts
// mean the same on both backends and in the emulator. native:: has already checked dtypes
// and promoted operands, so the backend only sees combinations that make sense. bfloat16 and
// float16 elements are computed in float and rounded once (element::in_opmath), as on the CPU.
// Bound: memory bandwidth (see elementwise.cuh).
#pragma once

#include <cstdint>
#include <type_traits>

#include <ember/core/backend.h>
#include <ember/core/element_functions.h>
#include <ember/core/error.h>
#include <ember/cuda/kernels/elementwise.cuh>
#include <ember/cuda/kernels/relu_backward.cuh>

EMBER_KERNELS_BEGIN

// ------------------------------------------------------------------ dispatch
inline void dispatch_fill(const StridedPlan& plan, Scalar value, cudaStream_t stream) {
  EMBER_DISPATCH_ALL_AND_REDUCED(plan.dtypes[0], launch_elementwise<scalar_t>(plan, element::Fill<scalar_t>{value.to<scalar_t>()}, stream));
}

// dst <- cast(src): every pair of dtypes (8 × 8 instantiations of the same kernel).
inline void dispatch_copy(const StridedPlan& plan, cudaStream_t stream) {
  EMBER_DISPATCH_ALL_AND_REDUCED(plan.dtypes[0], {
    using To = scalar_t;
    EMBER_DISPATCH_ALL_AND_REDUCED(plan.dtypes[1], launch_elementwise<To, scalar_t>(plan, element::Cast<To, scalar_t>{}, stream));
  });
}

// One case per row of core/op_list.h, as the CPU loops (core/cpu/elementwise_kernels.cpp).
template <class T>
void unary_for_type(UnaryOp op, const StridedPlan& plan, const UnaryParams& params, cudaStream_t stream) {
  switch (op) {
#define EMBER_UNARY_KERNEL(Functor, inputs)                                                      \
  case UnaryOp::Functor:                                                                      \
    if constexpr (op_accepts<OpInputs::inputs, T>) return launch_elementwise<T, T>(plan, element::in_opmath<T>(element::Functor<opmath_t<T>>{}), stream); \
    break;
    EMBER_UNARY_KERNELS
#undef EMBER_UNARY_KERNEL
    case UnaryOp::Clamp:
      return launch_elementwise<T, T>(plan, element::in_opmath<T>(element::Clamp<opmath_t<T>>{params.low_as<opmath_t<T>>(),
                                                       params.high_as<opmath_t<T>>(), params.has_low, params.has_high}), stream);
    case UnaryOp::PowScalar:
      return element::with_pow_scalar<opmath_t<T>>(params.exponent,
                                         [&](auto power) { launch_elementwise<T, T>(plan, element::in_opmath<T>(power), stream); });
  }
  throw DTypeError(make_message("CUDA backend: unary op ", static_cast<int>(op), " not implemented for '",
                                scalar_type_name(plan.dtypes[0]), "'"));
}

inline void dispatch_unary(UnaryOp op, const StridedPlan& plan, const UnaryParams& params, cudaStream_t stream) {
  EMBER_DISPATCH_ALL_AND_REDUCED(plan.dtypes[1], unary_for_type<scalar_t>(op, plan, params, stream));
}

template <class T>
void binary_for_type(BinaryOp op, const StridedPlan& plan, Scalar alpha, cudaStream_t stream) {
  using Op = opmath_t<T>;  // float for the 16-bit floats (alpha rounded to T first, as the CPU loops)
  const Op a = static_cast<Op>(alpha.to<T>());
  switch (op) {
    case BinaryOp::Add: return launch_elementwise<T, T, T>(plan, element::in_opmath<T>(element::AddScaled<Op>{a}), stream);
    case BinaryOp::Sub:  // a - alpha * b is a + (-alpha) * b, the same bits (as the CPU loops)
      if constexpr (!std::is_same_v<T, bool>) return launch_elementwise<T, T, T>(plan, element::in_opmath<T>(element::AddScaled<Op>{math::neg(a)}), stream);
      break;
#define EMBER_BINARY_KERNEL(Functor, result, types)                                               \
  case BinaryOp::Functor:                                                                     \
    if constexpr (op_accepts<OpInputs::types, T>) return launch_elementwise<op_output_t<OpResult::result, T>, T, T>(plan, element::in_opmath<T>(element::Functor<opmath_t<T>>{}), stream); \
    break;
    EMBER_BINARY_KERNELS
#undef EMBER_BINARY_KERNEL
  }
  throw DTypeError(make_message("CUDA backend: binary op ", static_cast<int>(op), " not implemented for '",
                                scalar_type_name(plan.dtypes[1]), "'"));
}

// Operand 1's dtype is the computation's (operand 0 is Bool for comparisons).
inline void dispatch_binary(BinaryOp op, const StridedPlan& plan, Scalar alpha, cudaStream_t stream) {
  EMBER_DISPATCH_ALL_AND_REDUCED(plan.dtypes[1], binary_for_type<scalar_t>(op, plan, alpha, stream));
}

inline void dispatch_where(const StridedPlan& plan, cudaStream_t stream) {
  EMBER_DISPATCH_ALL_AND_REDUCED(plan.dtypes[0], (launch_elementwise<scalar_t, bool, scalar_t, scalar_t>(plan, element::Where<scalar_t>{}, stream)));
}

EMBER_KERNELS_END
