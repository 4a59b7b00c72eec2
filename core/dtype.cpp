// core/dtype.cpp — dtype tables and torch.promote_types.
#include <ember/core/dtype.h>

#include <ostream>

#include <ember/core/error.h>

namespace ember {

namespace {
struct DTypeInfo {
  const char* name;         // torch.<name>
  const char* scalar_type;  // PyTorch's ScalarType name
  const char* c_type;       // the C++ type's name, as some PyTorch messages print it
};
// (The item sizes are itemsize() in the header, inline: every op asks for them.)
constexpr DTypeInfo kInfo[kNumDTypes] = {
    {"bool", "Bool", "bool"},       {"uint8", "Byte", "unsigned char"}, {"int32", "Int", "int"},
    {"int64", "Long", "long int"},  {"float32", "Float", "float"},      {"float64", "Double", "double"},
    {"float16", "Half", "c10::Half"}, {"bfloat16", "BFloat16", "c10::BFloat16"},
};
const DTypeInfo& info(DType dtype) { return kInfo[static_cast<int>(dtype)]; }
}  // namespace

std::string dtype_name(DType dtype) { return info(dtype).name; }
std::string scalar_type_name(DType dtype) { return info(dtype).scalar_type; }
const char* c_type_name(DType dtype) { return info(dtype).c_type; }
DType default_float_dtype() { return DType::Float32; }

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  // Floating beats integral beats bool.
  if (is_floating_point(a) != is_floating_point(b)) return is_floating_point(a) ? a : b;
  if (is_floating_point(a)) {
    // Within floating the wider type wins; float16 with bfloat16, neither of which holds
    // the other's values, gives float32 (torch.promote_types).
    if (is_reduced_floating_point(a) && is_reduced_floating_point(b)) return DType::Float32;
    if (a == DType::Float64 || b == DType::Float64) return DType::Float64;
    return is_reduced_floating_point(a) ? b : a;
  }
  // Integral: the wider type wins; uint8 with a signed integer promotes to the signed one
  // (int32, int64), bool to anything.
  auto rank = [](DType d) {
    switch (d) {
      case DType::Bool: return 0;
      case DType::UInt8: return 1;
      case DType::Int32: return 2;
      case DType::Int64: return 3;
      default: return 0;  // floating dtypes were handled above
    }
  };
  return rank(a) >= rank(b) ? a : b;
}

namespace detail {
void throw_dtype_not_implemented(DType dtype) {
  throw DTypeError(make_message("not implemented for '", scalar_type_name(dtype), "'"));
}
void throw_not_floating_or_not_implemented(DType dtype) {
  if (is_floating_point(dtype)) throw_dtype_not_implemented(dtype);
  throw DTypeError(make_message("expected a floating point dtype, got ", dtype_name(dtype)));
}
}  // namespace detail

std::ostream& operator<<(std::ostream& out, DType dtype) { return out << "torch." << dtype_name(dtype); }

}  // namespace ember
