// core/value_range.cpp — the dtype ranges of core/value_range.h (the rules are listed there).
#include <ember/core/value_range.h>

#include <cmath>
#include <limits>

#include <ember/core/error.h>

namespace ember {

IntegralRange integral_range(DType dtype) {
  switch (dtype) {
    case DType::Bool: return {0, 1};
    case DType::UInt8: return {0, std::numeric_limits<std::uint8_t>::max()};
    case DType::Int32: return {std::numeric_limits<std::int32_t>::lowest(), std::numeric_limits<std::int32_t>::max()};
    default: return {std::numeric_limits<std::int64_t>::lowest(), std::numeric_limits<std::int64_t>::max()};
  }
}

bool scalar_fits(Scalar value, DType dtype) {
  if (dtype == DType::Bool || dtype == DType::Float64 || value.is_bool()) return true;
  // The largest finite value of a 16-bit float: anything beyond it (inf and NaN excepted)
  // is PyTorch's overflow error, even where it would round down to the largest.
  const double reduced_max = dtype == DType::Float16    ? 65504.0
                             : dtype == DType::BFloat16 ? static_cast<double>(BFloat16::from_bits(0x7F7F))
                                                        : 0.0;
  if (value.is_integral()) {
    if (is_reduced_floating_point(dtype)) return std::fabs(static_cast<double>(value.to_int64())) <= reduced_max;
    if (is_floating_point(dtype)) return true;  // float32 holds every int64 magnitude (rounded)
    const IntegralRange range = integral_range(dtype);
    const std::int64_t v = value.to_int64();
    // Unsigned types also take negatives down to -max (they wrap: -1 -> 255).
    const std::int64_t lowest = range.lowest == 0 ? -range.max : range.lowest;
    return v >= lowest && v <= range.max;
  }
  const double v = value.to_double();
  if (dtype == DType::Float32) {
    return !std::isfinite(v) || std::fabs(v) <= static_cast<double>(std::numeric_limits<float>::max());
  }
  if (is_reduced_floating_point(dtype)) return !std::isfinite(v) || std::fabs(v) <= reduced_max;
  // Into an integer type: the fraction is dropped, so anything below max + 1 fits. max + 1
  // is a power of two, exact as a double (2^63 for int64, where max itself is not).
  if (!std::isfinite(v)) return false;
  const IntegralRange range = integral_range(dtype);
  const double above_max = std::ldexp(static_cast<double>(range.max / 2 + 1), 1);  // max + 1 without overflow
  return v >= static_cast<double>(range.lowest) && v < above_max;
}

void check_scalar_fits(Scalar value, DType dtype) {
  EMBER_CHECK(scalar_fits(value, dtype), ValueError, "value cannot be converted to type ",
              checked_convert_type_name(dtype), " without overflow");
}

std::string checked_convert_type_name(DType dtype) {
  switch (dtype) {
    case DType::Bool: return "bool";
    case DType::UInt8: return "uint8_t";
    case DType::Int32: return "int";
    case DType::Int64: return "int64_t";
    case DType::Float32: return "float";
    case DType::Float64: return "double";
    case DType::Float16: return "c10::Half";
    case DType::BFloat16: return "c10::BFloat16";
  }
  return "?";
}

std::string sampler_type_name(DType dtype) {
  switch (dtype) {
    case DType::Bool: return "bool";
    case DType::UInt8: return "unsigned char";
    case DType::Int32: return "int";
    case DType::Int64: return "long";
    case DType::Float32: return "float";
    case DType::Float64: return "double";
    case DType::Float16: return "c10::Half";
    case DType::BFloat16: return "c10::BFloat16";
  }
  return "?";
}

void check_uniform_bounds(DType dtype, double from, double to) {
  // The dtype's largest finite value: also the 16-bit floats' own (65504, about 3.39e38),
  // since PyTorch checks against std::numeric_limits<scalar_t> though it draws in float.
  const double max = dtype == DType::Float32    ? std::numeric_limits<float>::max()
                     : dtype == DType::Float16  ? 65504.0
                     : dtype == DType::BFloat16 ? static_cast<double>(BFloat16::from_bits(0x7F7F))
                                                : std::numeric_limits<double>::max();
  EMBER_CHECK(from >= -max && from <= max, ValueError, "from is out of bounds for ", sampler_type_name(dtype));
  EMBER_CHECK(to >= -max && to <= max, ValueError, "to is out of bounds for ", sampler_type_name(dtype));
  EMBER_CHECK(from <= to, ValueError, "uniform_ expects to return a [from, to) range, but found from=", from,
              " > to=", to);
  EMBER_CHECK(to - from <= max, ValueError, "uniform_ expects to-from <= std::numeric_limits<",
              scalar_type_name(dtype), ">::max(), but found to=", to, " and from=", from,
              " which result in to-from to exceed the limit");
}

void check_random_range(DType dtype, std::int64_t from, std::int64_t last) {
  const IntegralRange bounds = integral_range(dtype);
  const std::string type = sampler_type_name(dtype);
  EMBER_CHECK(from >= bounds.lowest && from <= bounds.max, ValueError, "from is out of bounds for ", type);
  EMBER_CHECK(last >= bounds.lowest && last <= bounds.max, ValueError, "to - 1 is out of bounds for ", type);
}

}  // namespace ember
