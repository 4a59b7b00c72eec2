// core/scalar.h — a number that is not a tensor (PyTorch: a Python scalar / c10::Scalar).
//
// `x + 2` and `x * 0.5` take a Scalar. It remembers whether it was written as a bool, an
// integer or a floating number, because type promotion depends on that category:
// int64_tensor * 0.5 is float32, float32_tensor * 2 stays float32.
#pragma once

#include <cstdint>
#include <type_traits>

#include <ember/core/element_math.h>

namespace ember {

class Scalar {
 public:
  enum class Kind : std::uint8_t { Bool, Integral, Floating };

  Scalar() : Scalar(std::int64_t{0}) {}
  template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  Scalar(T value) {  // NOLINT: implicit on purpose, like c10::Scalar
    if constexpr (std::is_same_v<T, bool>) {
      kind_ = Kind::Bool;
      integral_ = value ? 1 : 0;
    } else if constexpr (std::is_integral_v<T>) {
      kind_ = Kind::Integral;
      integral_ = static_cast<std::int64_t>(value);
    } else {
      kind_ = Kind::Floating;
      floating_ = static_cast<double>(value);
    }
  }

  // A bfloat16 or float16 value is a floating number (exactly representable as a double).
  template <class T, std::enable_if_t<is_reduced_float_v<T>, int> = 0>
  Scalar(T value) : Scalar(static_cast<double>(static_cast<float>(value))) {}  // NOLINT

  Kind kind() const { return kind_; }
  bool is_floating_point() const { return kind_ == Kind::Floating; }
  bool is_integral() const { return kind_ == Kind::Integral; }
  bool is_bool() const { return kind_ == Kind::Bool; }

  // The value as T, converted as a tensor element is (math::convert: defined for every value;
  // native:: range-checks numbers that enter a tensor first, with PyTorch's errors).
  template <class T>
  T to() const {
    if (kind_ == Kind::Floating) return math::convert<T>(floating_);
    return math::convert<T>(integral_);
  }
  double to_double() const { return to<double>(); }
  std::int64_t to_int64() const { return to<std::int64_t>(); }

 private:
  Kind kind_ = Kind::Integral;
  std::int64_t integral_ = 0;
  double floating_ = 0.0;
};

}  // namespace ember
