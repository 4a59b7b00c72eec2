// core/dtype.cpp — dtype tables and torch.promote_types.
#include <ember/core/dtype.h>

#include <ostream>

#include <ember/core/error.h>

namespace ember {

namespace {
struct DTypeInfo {
  std::size_t itemsize;
  const char* name;         // torch.<name>
  const char* scalar_type;  // PyTorch's ScalarType name
  const char* c_type;       // the C++ type's name, as some PyTorch messages print it
};
constexpr DTypeInfo kInfo[kNumDTypes] = {
    {1, "bool", "Bool", "bool"},       {1, "uint8", "Byte", "unsigned char"}, {4, "int32", "Int", "int"},
    {8, "int64", "Long", "long int"},  {4, "float32", "Float", "float"},      {8, "float64", "Double", "double"},
};
const DTypeInfo& info(DType dtype) { return kInfo[static_cast<int>(dtype)]; }
}  // namespace

std::size_t itemsize(DType dtype) { return info(dtype).itemsize; }
bool is_floating_point(DType dtype) { return dtype == DType::Float32 || dtype == DType::Float64; }
bool is_integral(DType dtype, bool include_bool) {
  if (dtype == DType::Bool) return include_bool;
  return !is_floating_point(dtype);
}
std::string dtype_name(DType dtype) { return info(dtype).name; }
std::string scalar_type_name(DType dtype) { return info(dtype).scalar_type; }
const char* c_type_name(DType dtype) { return info(dtype).c_type; }
DType default_float_dtype() { return DType::Float32; }

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  // Floating beats integral beats bool; within floating/integral the wider type wins.
  // uint8 with a signed integer promotes to the signed one if it is wider (int32, int64).
  auto rank = [](DType d) {
    switch (d) {
      case DType::Bool: return 0;
      case DType::UInt8: return 1;
      case DType::Int32: return 2;
      case DType::Int64: return 3;
      case DType::Float32: return 4;
      case DType::Float64: return 5;
    }
    return 0;
  };
  return rank(a) >= rank(b) ? a : b;
}

std::ostream& operator<<(std::ostream& out, DType dtype) { return out << "torch." << dtype_name(dtype); }

}  // namespace ember
