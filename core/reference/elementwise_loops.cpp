// core/reference/elementwise_loops.cpp — the reference loops of fill, copy, unary, binary
// and where: one element at a time, in linear order.
//
// Tutorial §2 (tensor operations). Read this before core/cpu/elementwise_kernels.cpp.
// Every kernel gets a StridedPlan (core/strided_index.h) from the TensorIterator: the
// operands are already broadcast to one shape and of the right dtypes, so an elementwise op
// is nothing but
//
//     for i in 0 .. numel:  out[i] = f(in0[i], in1[i], ...)
//
// where "x[i]" means "operand x's element for linear index i", found by operand_offset()
// (i written as mixed-radix digits of the sizes, each digit times that operand's stride; a
// broadcast operand has stride 0, so it repeats). f is a functor of
// core/element_functions.h. A breakpoint in map_unary or map_binary, then `next`, shows one
// element after the other being computed (docs/debugging.md).
//
// The fast loops differ only in *how* they walk the same indices: they split the range
// across threads, compute operand offsets once per row instead of once per element, give
// the compiler unit-stride loops it vectorises, and write very large outputs with
// non-temporal stores. The value of every element is the same (tests/core/test_reference_kernels.cpp).
#include <cstdint>
#include <type_traits>

#include <ember/core/dispatch.h>
#include <ember/core/element_functions.h>
#include <ember/core/error.h>
#include <ember/core/op_list.h>
#include <ember/core/reference/reference_kernels.h>

namespace ember::reference {

namespace {

// Operand k's element for linear index i.
template <class T>
T& element(const StridedPlan& plan, int k, std::int64_t i) {
  return static_cast<T*>(plan.data[k])[operand_offset(plan, k, i)];
}

// out = f(in): operands [out, in]. Out and In differ only for copy (a cast). One statement
// per line, so that gdb's `next` shows each element (docs/debugging.md).
template <class Out, class In, class F>
void map_unary(const StridedPlan& plan, F f) {
  for (std::int64_t i = 0; i < plan.numel; ++i) {
    const In x = element<In>(plan, 1, i);
    element<Out>(plan, 0, i) = f(x);
  }
}

// out = f(a, b): operands [out, a, b]. Out is T, or bool for comparisons.
template <class Out, class T, class F>
void map_binary(const StridedPlan& plan, F f) {
  for (std::int64_t i = 0; i < plan.numel; ++i) {
    const T a = element<T>(plan, 1, i);
    const T b = element<T>(plan, 2, i);
    element<Out>(plan, 0, i) = f(a, b);
  }
}

// One case per row of core/op_list.h, as in the fast loops: the row's functor, for the
// dtypes the row accepts (native:: has refused or promoted the others already). A new row
// needs no edit here.
template <class T>
void unary_typed(UnaryOp op, const StridedPlan& plan, const UnaryParams& params) {
  switch (op) {
#define EMBER_UNARY_KERNEL(Functor, inputs)                                                      \
  case UnaryOp::Functor:                                                                      \
    if constexpr (op_accepts<OpInputs::inputs, T>) return map_unary<T, T>(plan, element::in_opmath<T>(element::Functor<opmath_t<T>>{})); \
    break;
    EMBER_UNARY_KERNELS
#undef EMBER_UNARY_KERNEL
    case UnaryOp::Clamp:
      return map_unary<T, T>(plan, element::in_opmath<T>(element::Clamp<opmath_t<T>>{params.low_as<opmath_t<T>>(), params.high_as<opmath_t<T>>(), params.has_low,
                                                    params.has_high}));
    case UnaryOp::PowScalar:
      // x ** 2 is x * x, x ** 0.5 is sqrt(x), ...: PyTorch's shortcuts, chosen in one place.
      return element::with_pow_scalar<opmath_t<T>>(params.exponent, [&](auto power) { map_unary<T, T>(plan, element::in_opmath<T>(power)); });
  }
  throw DTypeError(make_message("reference::unary: op ", static_cast<int>(op), " not implemented for '",
                                scalar_type_name(dtype_of_v<T>), "'"));
}

// a + alpha * b (Add) and a - alpha * b (Sub). The functor for each alpha is the one the fast
// loop picks: plain a + b and a - b when alpha is ±1, else a + alpha * b rounded once
// (element::AddScaled's fused multiply-add), which gives the same bits (multiplying by ±1
// and negating are exact).
template <class T>
void add_typed(bool subtract, const StridedPlan& plan, Scalar alpha_scalar) {
  const double alpha_value = subtract ? -alpha_scalar.to_double() : alpha_scalar.to_double();
  if (alpha_value == 1.0) {
    map_binary<T, T>(plan, element::in_opmath<T>(element::Add<opmath_t<T>>{}));
  } else if constexpr (!std::is_same_v<T, bool>) {
    if (alpha_value == -1.0) {
      map_binary<T, T>(plan, element::in_opmath<T>(element::Sub<opmath_t<T>>{}));
    } else {
      // A 16-bit alpha is rounded to T, then computed with in float, as PyTorch does.
          const auto alpha = static_cast<opmath_t<T>>(alpha_scalar.to<T>());
      map_binary<T, T>(plan, element::in_opmath<T>(element::AddScaled<opmath_t<T>>{subtract ? math::neg(alpha) : alpha}));
    }
  } else {
    map_binary<T, T>(plan, element::AddScaled<T>{alpha_scalar.to<T>()});  // bool: a || (alpha && b)
  }
}

template <class T>
void binary_typed(BinaryOp op, const StridedPlan& plan, Scalar alpha) {
  switch (op) {
    case BinaryOp::Add: return add_typed<T>(false, plan, alpha);
    case BinaryOp::Sub: return add_typed<T>(true, plan, alpha);
#define EMBER_BINARY_KERNEL(Functor, result, types)                                               \
  case BinaryOp::Functor:                                                                     \
    if constexpr (op_accepts<OpInputs::types, T>) return map_binary<op_output_t<OpResult::result, T>, T>(plan, element::in_opmath<T>(element::Functor<opmath_t<T>>{})); \
    break;
    EMBER_BINARY_KERNELS
#undef EMBER_BINARY_KERNEL
  }
  throw DTypeError(make_message("reference::binary: op ", static_cast<int>(op), " not implemented for '",
                                scalar_type_name(dtype_of_v<T>), "'"));
}

}  // namespace

// plan operands: [out]. Every element becomes value, converted to out's dtype.
void fill(const StridedPlan& plan, Scalar value) {
  EMBER_DISPATCH_ALL_AND_REDUCED(plan.dtypes[0], {
    const element::Fill<scalar_t> constant{value.to<scalar_t>()};
    for (std::int64_t i = 0; i < plan.numel; ++i) element<scalar_t>(plan, 0, i) = constant();
  });
}

// plan operands: [dst, src]; dst = src converted to dst's dtype (float -> int truncates
// toward zero, nonzero -> true: element::Cast). The fast copy memcpy's same-dtype dense
// tensors; converting a type to itself is the identity, so this loop gives the same bytes.
void copy(const StridedPlan& plan) {
  EMBER_DISPATCH_ALL_AND_REDUCED(plan.dtypes[0], {
    using dst_t = scalar_t;
    EMBER_DISPATCH_ALL_AND_REDUCED(plan.dtypes[1], { map_unary<dst_t, scalar_t>(plan, element::Cast<dst_t, scalar_t>{}); });
  });
}

void unary(UnaryOp op, const StridedPlan& plan, const UnaryParams& params) {
  EMBER_DISPATCH_ALL_AND_REDUCED(plan.dtypes[1], unary_typed<scalar_t>(op, plan, params));
}

void binary(BinaryOp op, const StridedPlan& plan, Scalar alpha) {
  EMBER_DISPATCH_ALL_AND_REDUCED(plan.dtypes[1], binary_typed<scalar_t>(op, plan, alpha));
}

// plan operands: [out, condition (bool), a, b]: out = condition ? a : b.
void where(const StridedPlan& plan) {
  EMBER_DISPATCH_ALL_AND_REDUCED(plan.dtypes[0], {
    const element::Where<scalar_t> choose{};
    for (std::int64_t i = 0; i < plan.numel; ++i) {
      element<scalar_t>(plan, 0, i) =
          choose(element<bool>(plan, 1, i), element<scalar_t>(plan, 2, i), element<scalar_t>(plan, 3, i));
    }
  });
}

// The CPUReference slots (core/dispatch.h): served when EMBER_KERNELS=reference.
EMBER_REGISTER_KERNEL(::ember::fill_kernel, CPUReference, fill);
EMBER_REGISTER_KERNEL(::ember::copy_kernel, CPUReference, copy);
EMBER_REGISTER_KERNEL(::ember::unary_kernel, CPUReference, unary);
EMBER_REGISTER_KERNEL(::ember::binary_kernel, CPUReference, binary);
EMBER_REGISTER_KERNEL(::ember::where_kernel, CPUReference, where);

}  // namespace ember::reference
