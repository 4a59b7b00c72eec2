// core/cpu/sixteen_bit_words.h — a bfloat16 or float16 array seen as its 16-bit words.
//
// Kernels that move, compare, pack or zero 16-bit floats without arithmetic on them (pooling,
// im2col, the bfloat16 GEMM's panels, ReLU by bits) work on the raw words: one load of a word
// instead of a conversion per element. BFloat16 and Half are exactly their bits
// (core/reduced_float.h), so the array is an array of uint16_t; this is the one place that says so.
#pragma once

#include <cstdint>
#include <type_traits>

#include <ember/core/reduced_float.h>

namespace ember::cpu {

template <class T>
concept SixteenBitFloat = std::is_same_v<T, BFloat16> || std::is_same_v<T, Half>;

static_assert(sizeof(BFloat16) == sizeof(std::uint16_t) && sizeof(Half) == sizeof(std::uint16_t));

template <SixteenBitFloat T>
inline const std::uint16_t* bits_of(const T* x) {
  return reinterpret_cast<const std::uint16_t*>(x);  // NOLINT: the elements are their bits
}
template <SixteenBitFloat T>
inline std::uint16_t* bits_of(T* x) {
  return reinterpret_cast<std::uint16_t*>(x);  // NOLINT: the elements are their bits
}

}  // namespace ember::cpu
