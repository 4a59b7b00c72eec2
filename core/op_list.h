// core/op_list.h — the elementwise ops, one row each.
//
// An elementwise op has three parts, each written once:
//   - its arithmetic: a functor in core/element_functions.h (element::Exp<T>), run by the
//     CPU loops and the CUDA kernels alike;
//   - its row here: its name, its functor, which dtypes it takes and what it says about the
//     others;
//   - its derivative: its row in autograd/derivatives.cpp.
// Everything else is derived from the rows with X-macros (a file defines X to pick the
// columns it needs and expands the list): the UnaryOp/BinaryOp enumerators (core/backend.h),
// the switch cases of both backends' kernels, the declarations and definitions of
// native::name, ember::name and Tensor::name. docs/adding-an-op.md walks through adding GELU.
#pragma once

#include <type_traits>

#include <ember/core/reduced_float.h>

namespace ember {

// Which dtypes an op takes (native:: applies it before the kernel runs):
enum class OpInputs {
  AnyDType,    // computes in the input's own dtype (neg, abs, sign, relu)
  ToFloat,     // integer and bool inputs compute in the default float dtype (exp, log, ...)
  FloatOnly,   // integer and bool inputs are an error ("GeluKernelImpl" not implemented for 'Long')
};

// Unary ops reachable by name: X(name, Functor, inputs, method, message)
//   name     ember::name(x), native::name(x) and, when method is Method, x.name()
//   Functor  element::Functor<T> in core/element_functions.h, and UnaryOp::Functor
//   message  AnyDType: PyTorch's error for a bool input (nullptr: bool is accepted);
//            FloatOnly: the kernel name in PyTorch's "\"name\" not implemented for 'Long'"
#define EMBER_UNARY_OPS(X)                                                                                    \
  X(neg, Neg, AnyDType, Method,                                                                              \
    "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, "    \
    "use the `~` or `logical_not()` operator instead.")                                                     \
  X(abs, Abs, AnyDType, Method, "\"abs_cpu\" not implemented for 'Bool'")                                    \
  X(sign, Sign, AnyDType, Method, nullptr)                                                                   \
  X(relu, Relu, AnyDType, Method, "Boolean inputs not supported for relu")                                   \
  X(exp, Exp, ToFloat, Method, nullptr)                                                                      \
  X(log, Log, ToFloat, Method, nullptr)                                                                      \
  X(sqrt, Sqrt, ToFloat, Method, nullptr)                                                                    \
  X(rsqrt, Rsqrt, ToFloat, Method, nullptr)                                                                  \
  X(sigmoid, Sigmoid, ToFloat, Method, nullptr)                                                              \
  X(tanh, Tanh, ToFloat, Method, nullptr)                                                                    \
  X(erf, Erf, ToFloat, Method, nullptr)                                                                      \
  X(gelu, Gelu, FloatOnly, FunctionOnly, "GeluKernelImpl")                                                   \
  X(silu, Silu, FloatOnly, FunctionOnly, "silu_cpu")

// Unary kernels reached through a function with a parameter (gelu(x, "tanh")):
// X(Functor, inputs, message), the columns as above.
#define EMBER_UNARY_VARIANTS(X) X(GeluTanh, FloatOnly, "GeluKernelImpl")

// Binary ops reachable by name (broadcasting, type promotion): X(name, Functor, result, types)
//   result   SameDType (the promoted dtype) or Bool (comparisons)
//   types    the computed dtypes the kernel takes: AnyDType, or FloatOnly (div: native
//            promotes integers to float first)
// add and sub, which take an alpha, are written out in core/elementwise.cpp.
#define EMBER_BINARY_OPS(X)                \
  X(mul, Mul, SameDType, AnyDType)         \
  X(div, Div, SameDType, FloatOnly)        \
  X(pow, Pow, SameDType, AnyDType)         \
  X(maximum, Maximum, SameDType, AnyDType) \
  X(minimum, Minimum, SameDType, AnyDType) \
  X(eq, Eq, Bool, AnyDType)                \
  X(ne, Ne, Bool, AnyDType)                \
  X(lt, Lt, Bool, AnyDType)                \
  X(le, Le, Bool, AnyDType)                \
  X(gt, Gt, Bool, AnyDType)                \
  X(ge, Ge, Bool, AnyDType)                \
  X(logical_and, LogicalAnd, Bool, AnyDType)

// Backward kernels: out = grad * (the op's derivative at x), in one pass. X(name, Functor,
// types) with native::name(grad, x) (x: the input or the result, as the derivative row says).
#define EMBER_BACKWARD_OPS(X)                          \
  X(relu_backward, ReluBackward, AnyDType)             \
  X(tanh_backward, TanhBackward, FloatOnly)            \
  X(gelu_backward, GeluBackward, FloatOnly)            \
  X(gelu_tanh_backward, GeluTanhBackward, FloatOnly)   \
  X(silu_backward, SiluBackward, FloatOnly)

// A binary op's output dtype.
enum class OpResult { SameDType, Bool };

// Every element kernel of the rows above, for the backends' switches (CPU, reference, CUDA).
// A backend defines
//   EMBER_UNARY_KERNEL(Functor, inputs)          its `case UnaryOp::Functor: ...`
//   EMBER_BINARY_KERNEL(Functor, result, types)  its `case BinaryOp::Functor: ...`
// and writes EMBER_UNARY_KERNELS / EMBER_BINARY_KERNELS inside its switch.
#define EMBER_UNARY_ROW_KERNEL_(name, Functor, inputs, ...) EMBER_UNARY_KERNEL(Functor, inputs)
#define EMBER_UNARY_VARIANT_KERNEL_(Functor, inputs, ...) EMBER_UNARY_KERNEL(Functor, inputs)
#define EMBER_UNARY_KERNELS \
  EMBER_UNARY_OPS(EMBER_UNARY_ROW_KERNEL_) EMBER_UNARY_VARIANTS(EMBER_UNARY_VARIANT_KERNEL_)
#define EMBER_BINARY_ROW_KERNEL_(name, Functor, result, types) EMBER_BINARY_KERNEL(Functor, result, types)
#define EMBER_BACKWARD_ROW_KERNEL_(name, Functor, types) EMBER_BINARY_KERNEL(Functor, SameDType, types)
#define EMBER_BINARY_KERNELS \
  EMBER_BINARY_OPS(EMBER_BINARY_ROW_KERNEL_) EMBER_BACKWARD_OPS(EMBER_BACKWARD_ROW_KERNEL_)

// Whether a kernel instantiates its functor for element type T (bfloat16 and float16 count
// as floating: their functor is the float one, element::in_opmath).
template <OpInputs inputs, class T>
constexpr bool op_accepts = inputs == OpInputs::AnyDType || is_floating_v<T>;

// The element type a binary kernel writes: T, or bool for a comparison.
template <OpResult result, class T>
using op_output_t = std::conditional_t<result == OpResult::Bool, bool, T>;

}  // namespace ember
