// core/dtype.h — element types (PyTorch: torch.dtype) and type promotion.
//
// Tensor §2.2 of the tutorial: integers default to int64, floats to float32, and
// `.to(float32)` converts. Promotion follows torch.result_type: categories rank
// bool < integral < floating; within a category the wider type wins; and 0-d tensors and
// Python-style scalars only raise the *category*, never the width (see promote_operands in
// core/type_promotion.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include <ember/core/reduced_float.h>

namespace ember {

enum class DType : std::uint8_t {
  Bool,
  UInt8,
  Int32,
  Int64,
  Float32,
  Float64,
  // The 16-bit floats (core/reduced_float.h): stored in 16 bits, computed in float.
  Float16,
  BFloat16,
};

constexpr int kNumDTypes = 8;

// Shorthand constants in PyTorch's spelling: ember::kFloat32, ember::kInt64, ...
constexpr DType kBool = DType::Bool;
constexpr DType kUInt8 = DType::UInt8;
constexpr DType kInt32 = DType::Int32;
constexpr DType kInt64 = DType::Int64;
constexpr DType kFloat32 = DType::Float32;
constexpr DType kFloat64 = DType::Float64;
constexpr DType kFloat16 = DType::Float16;
constexpr DType kBFloat16 = DType::BFloat16;
constexpr DType kHalf = DType::Float16;
constexpr DType kFloat = DType::Float32;
constexpr DType kDouble = DType::Float64;
constexpr DType kLong = DType::Int64;
constexpr DType kInt = DType::Int32;

// These few are inline: every op asks them, several times a call.
constexpr std::size_t itemsize(DType dtype) {
  switch (dtype) {
    case DType::Bool:
    case DType::UInt8: return 1;
    case DType::Float16:
    case DType::BFloat16: return 2;
    case DType::Int32:
    case DType::Float32: return 4;
    case DType::Int64:
    case DType::Float64: return 8;
  }
  return 0;  // not a DType
}
// float16 and bfloat16: stored in 16 bits, computed in float32 (core/reduced_float.h).
constexpr bool is_reduced_floating_point(DType dtype) { return dtype == DType::Float16 || dtype == DType::BFloat16; }
// float16, bfloat16, float32, float64
constexpr bool is_floating_point(DType dtype) {
  return dtype == DType::Float32 || dtype == DType::Float64 || is_reduced_floating_point(dtype);
}
constexpr bool is_integral(DType dtype, bool include_bool = false) {
  return dtype == DType::Bool ? include_bool : !is_floating_point(dtype);
}
// "float32", "int64", ... (what PyTorch prints after "torch.").
std::string dtype_name(DType dtype);
// "Float", "Long", ... (PyTorch's ScalarType names, used in its error messages).
std::string scalar_type_name(DType dtype);
// "float", "long int", ... (the C++ type names some PyTorch messages print).
const char* c_type_name(DType dtype);
// Promotion of two dtypes of equal priority (torch.promote_types).
DType promote_types(DType a, DType b);

// The default floating dtype (torch.get_default_dtype): float32.
DType default_float_dtype();

// C++ type <-> DType.
template <class T> struct dtype_of;
template <> struct dtype_of<bool> { static constexpr DType value = DType::Bool; };
template <> struct dtype_of<std::uint8_t> { static constexpr DType value = DType::UInt8; };
template <> struct dtype_of<std::int32_t> { static constexpr DType value = DType::Int32; };
template <> struct dtype_of<std::int64_t> { static constexpr DType value = DType::Int64; };
template <> struct dtype_of<float> { static constexpr DType value = DType::Float32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::Float64; };
template <> struct dtype_of<Half> { static constexpr DType value = DType::Float16; };
template <> struct dtype_of<BFloat16> { static constexpr DType value = DType::BFloat16; };
template <class T> constexpr DType dtype_of_v = dtype_of<std::remove_cv_t<T>>::value;

std::ostream& operator<<(std::ostream& out, DType dtype);  // prints "torch.float32"

namespace detail {
// What a dispatch macro says about a dtype it has no case for: PyTorch's
// "not implemented for 'BFloat16'" (a DTypeError).
[[noreturn]] void throw_dtype_not_implemented(DType dtype);
// EMBER_DISPATCH_FLOATING's: "expected a floating point dtype, got int64", or the above for
// a floating dtype the op has no kernel for.
[[noreturn]] void throw_not_floating_or_not_implemented(DType dtype);
}  // namespace detail

}  // namespace ember

// EMBER_DISPATCH_ALL(dtype, T, body): runs body with `T` bound to the C++ type of dtype.
// The one place that turns a runtime dtype into a compile-time type.
#define EMBER_DISPATCH_CASE(enum_value, cpp_type, ...) \
  case ::ember::DType::enum_value: {                   \
    using scalar_t = cpp_type;                         \
    __VA_ARGS__;                                       \
    break;                                             \
  }
// An op that has no kernel for a dtype says so ("not implemented for 'BFloat16'"); the
// _AND_REDUCED variants add the 16-bit floats for the ops that handle them (computing in
// float: core/reduced_float.h).
#define EMBER_DISPATCH_INTEGRAL_CASES_(...)                                             \
  EMBER_DISPATCH_CASE(Bool, bool, __VA_ARGS__)                                          \
  EMBER_DISPATCH_CASE(UInt8, std::uint8_t, __VA_ARGS__)                                 \
  EMBER_DISPATCH_CASE(Int32, std::int32_t, __VA_ARGS__)                                 \
  EMBER_DISPATCH_CASE(Int64, std::int64_t, __VA_ARGS__)
#define EMBER_DISPATCH_FLOATING_CASES_(...)                                             \
  EMBER_DISPATCH_CASE(Float32, float, __VA_ARGS__)                                      \
  EMBER_DISPATCH_CASE(Float64, double, __VA_ARGS__)
#define EMBER_DISPATCH_REDUCED_CASES_(...)                                              \
  EMBER_DISPATCH_CASE(Float16, ::ember::Half, __VA_ARGS__)                              \
  EMBER_DISPATCH_CASE(BFloat16, ::ember::BFloat16, __VA_ARGS__)

#define EMBER_DISPATCH_ALL(dtype, ...)                                                  \
  do {                                                                                  \
    switch (dtype) {                                                                    \
      EMBER_DISPATCH_INTEGRAL_CASES_(__VA_ARGS__)                                       \
      EMBER_DISPATCH_FLOATING_CASES_(__VA_ARGS__)                                       \
      default: ::ember::detail::throw_dtype_not_implemented(dtype);                     \
    }                                                                                   \
  } while (0)
#define EMBER_DISPATCH_ALL_AND_REDUCED(dtype, ...)                                      \
  do {                                                                                  \
    switch (dtype) {                                                                    \
      EMBER_DISPATCH_INTEGRAL_CASES_(__VA_ARGS__)                                       \
      EMBER_DISPATCH_FLOATING_CASES_(__VA_ARGS__)                                       \
      EMBER_DISPATCH_REDUCED_CASES_(__VA_ARGS__)                                        \
    }                                                                                   \
  } while (0)
#define EMBER_DISPATCH_FLOATING(dtype, ...)                                             \
  do {                                                                                  \
    switch (dtype) {                                                                    \
      EMBER_DISPATCH_FLOATING_CASES_(__VA_ARGS__)                                       \
      default: ::ember::detail::throw_not_floating_or_not_implemented(dtype);           \
    }                                                                                   \
  } while (0)
#define EMBER_DISPATCH_FLOATING_AND_REDUCED(dtype, ...)                                 \
  do {                                                                                  \
    switch (dtype) {                                                                    \
      EMBER_DISPATCH_FLOATING_CASES_(__VA_ARGS__)                                       \
      EMBER_DISPATCH_REDUCED_CASES_(__VA_ARGS__)                                        \
      default: ::ember::detail::throw_not_floating_or_not_implemented(dtype);           \
    }                                                                                   \
  } while (0)
