// cuda/kernels/device_math.cuh — math functions callable from host, device and emulator.
//
// The C library's float and double functions (expf/exp, logf/log, ...) exist under the
// same names in CUDA device code and on the host, so picking by type here gives one
// spelling that every functor in elementwise_ops.cuh can use.
#pragma once

#include <cmath>
#include <type_traits>

#include <ember/core/host_device.h>

namespace ember::cuda::kernels::math {

template <class T> EMBER_HOST_DEVICE EMBER_INLINE T exp(T x) {
  if constexpr (std::is_same_v<T, float>) return ::expf(x); else return ::exp(x);
}
template <class T> EMBER_HOST_DEVICE EMBER_INLINE T log(T x) {
  if constexpr (std::is_same_v<T, float>) return ::logf(x); else return ::log(x);
}
template <class T> EMBER_HOST_DEVICE EMBER_INLINE T sqrt(T x) {
  if constexpr (std::is_same_v<T, float>) return ::sqrtf(x); else return ::sqrt(x);
}
template <class T> EMBER_HOST_DEVICE EMBER_INLINE T tanh(T x) {
  if constexpr (std::is_same_v<T, float>) return ::tanhf(x); else return ::tanh(x);
}
template <class T> EMBER_HOST_DEVICE EMBER_INLINE T pow(T x, T y) {
  if constexpr (std::is_same_v<T, float>) return ::powf(x, y); else return ::pow(x, y);
}
template <class T> EMBER_HOST_DEVICE EMBER_INLINE bool isnan(T x) {
  if constexpr (std::is_floating_point_v<T>) return x != x; else return false;
}

// Integer power by squaring (PyTorch: integer pow with a negative exponent is an error
// that native:: reports; here a negative exponent gives 0 unless the base is ±1).
template <class T> EMBER_HOST_DEVICE EMBER_INLINE T int_pow(T base, long long exponent) {
  if (exponent < 0) {
    if (base == T(1)) return T(1);
    if constexpr (std::is_signed_v<T>) {
      if (base == T(-1)) return (exponent % 2 == 0) ? T(1) : T(-1);
    }
    return T(0);
  }
  T result = T(1);
  while (exponent > 0) {
    if (exponent & 1) result = static_cast<T>(result * base);
    base = static_cast<T>(base * base);
    exponent >>= 1;
  }
  return result;
}

}  // namespace ember::cuda::kernels::math
