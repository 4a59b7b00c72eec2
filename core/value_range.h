// core/value_range.h — which numbers a dtype can hold, and PyTorch's errors for the rest.
//
// Writing a number into a tensor (fill_, full, zeros_like(..., value), the bounds of clamp,
// randint's range, uniform_'s bounds) must never wrap or reach an undefined cast: 1e20 in
// an int64 tensor, NaN in an int32 one, 300 in a uint8 one. PyTorch refuses these with
// "value cannot be converted to type uint8_t without overflow"; these helpers say the same.
//
// PyTorch's rule (c10's checked conversion), which these follow exactly:
//   - into bool: anything (non-zero is true);
//   - an integer into an integer type: within [lowest, max], except that unsigned types
//     also take negatives down to -max (they wrap, two's complement: -1 -> 255);
//   - a floating number into an integer type: not NaN or ±inf, at least `lowest`, and
//     below max + 1 (the fraction is dropped: 255.9 -> 255, 256.0 is refused);
//   - into float32: NaN and ±inf pass, finite numbers beyond ±FLT_MAX are refused;
//   - into float64 (and integers into floating types): always.
#pragma once

#include <cstdint>
#include <string>

#include <ember/core/dtype.h>
#include <ember/core/scalar.h>

namespace ember {

bool scalar_fits(Scalar value, DType dtype);
// ValueError "value cannot be converted to type uint8_t without overflow" when it does not.
void check_scalar_fits(Scalar value, DType dtype);

// The C++ type names PyTorch uses in these messages: "bool", "uint8_t", "int", "int64_t",
// "float", "double" (checked conversions) ...
std::string checked_convert_type_name(DType dtype);
// ... and "bool", "unsigned char", "int", "long", "float", "double" (the random samplers'
// "from is out of bounds for unsigned char").
std::string sampler_type_name(DType dtype);

// The smallest and largest value of an integral dtype (bool: 0 and 1).
struct IntegralRange {
  std::int64_t lowest, max;
};
IntegralRange integral_range(DType dtype);

// The random samplers' range checks, PyTorch's messages in PyTorch's order.
// uniform_: both bounds finite numbers of the floating `dtype`, ordered, and a width the
// dtype can hold (from + u · (to - from) would otherwise be inf).
void check_uniform_bounds(DType dtype, double from, double to);
// random_/randint into an integral `dtype` (bool included): `from` and `last` (to - 1) must
// be values it holds, or the draws would wrap (randint(0, 1000) into uint8).
void check_random_range(DType dtype, std::int64_t from, std::int64_t last);

}  // namespace ember
