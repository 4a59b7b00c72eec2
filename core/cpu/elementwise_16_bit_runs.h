// core/cpu/elementwise_16_bit_runs.h — performance code, safe to skip on a first read: the
// contiguous runs of bfloat16 and float16 elementwise ops (issue 22, tutorial §12).
//
// A bfloat16 or float16 op is its float function between a widening and a rounding
// (element::InOpmath). Element by element, the rounding is what costs: SSE2, which
// elementwise_kernels.cpp (the only includer) is built for, has no 32-to-16-bit pack, so it takes a dozen shuffles per four values.
//   bfloat16: the contiguous run is the same plain loop, compiled also for AVX-512 and AVX2
//     (GCC's target_clones; the loader picks the widest the CPU has), where the rounding is
//     a few vector instructions.
//   float16, bfloat16 GELU (whose float loop already has AVX-512/AVX2 builds, wide::run, and
//     would not vectorise as well inside the clone) and bfloat16 under clang (which clones no
//     templates): the run is computed in blocks — widen the inputs into float buffers (F16C
//     for float16), apply the float function (the float32 op's own loop, or its wide::run),
//     round the block with wide::run (F16C; AVX-512 / AVX2 clones for bfloat16).
// Either way the bits are the element-by-element loop's: widening is exact and the rounding
// is the same function.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include <ember/core/cpu/elementwise_wide_runs.h>
#include <ember/core/cpu/sixteen_bit_words.h>
#include <ember/core/element_functions.h>
#include <ember/core/reduced_float.h>

namespace ember::cpu::sixteen_bit {

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define EMBER_BFLOAT16_CLONES [[gnu::target_clones("avx512f", "avx2", "default")]]
constexpr bool kBfloat16Clones = true;
#else
#define EMBER_BFLOAT16_CLONES
constexpr bool kBfloat16Clones = false;
#endif

template <class F>
EMBER_BFLOAT16_CLONES void unary_run_bfloat16(const BFloat16* x, BFloat16* out, std::int64_t count, F f) {
  for (std::int64_t i = 0; i < count; ++i) out[i] = f(x[i]);
}

// x_step / y_step: 1 for a contiguous operand, 0 for one value broadcast along the run.
template <class F>
EMBER_BFLOAT16_CLONES void binary_run_bfloat16(const BFloat16* x, std::int64_t x_step, const BFloat16* y,
                                               std::int64_t y_step, BFloat16* out, std::int64_t count, F f) {
  if (x_step != 0 && y_step != 0) {
    for (std::int64_t i = 0; i < count; ++i) out[i] = f(x[i], y[i]);
  } else if (x_step != 0) {
    const BFloat16 y_value = y[0];
    for (std::int64_t i = 0; i < count; ++i) out[i] = f(x[i], y_value);
  } else {
    const BFloat16 x_value = x[0];
    for (std::int64_t i = 0; i < count; ++i) out[i] = f(x_value, y[i]);
  }
}

// ReLU and its backward on bfloat16 bits: selects that never widen. Each gives the bits of
// the float function rounded back (every NaN to 0x7FC0, as bfloat16_bits_from_float), so the
// results equal the loops above (tests/core/test_reduced_float.cpp checks every bit pattern);
// those ran at about one element per cycle, bound by the rounding, on the CNN's activations.
// (Written with bitwise operations, not && and ?:, so that the loops vectorise: with
// branches, the backward ran one mispredicted element at a time.)
inline std::uint16_t canonical_bfloat16(std::uint16_t bits) {
  const std::uint16_t nan = (bits & 0x7FFF) > 0x7F80 ? 0xFFFF : 0;
  return static_cast<std::uint16_t>((bits & ~nan) | (0x7FC0 & nan));
}
// x < 0 ? 0 : x: negative non-NaN values (not -0.0) become +0.0.
EMBER_BFLOAT16_CLONES inline void relu_bfloat16_bits(const std::uint16_t* x, std::uint16_t* out, std::int64_t count) {
  for (std::int64_t i = 0; i < count; ++i) {
    const std::uint16_t magnitude = x[i] & 0x7FFF;
    const std::uint16_t negative =
        static_cast<std::uint16_t>(-static_cast<int>((x[i] >> 15) & (magnitude != 0) & (magnitude <= 0x7F80)));
    out[i] = static_cast<std::uint16_t>(canonical_bfloat16(x[i]) & ~negative);
  }
}
// result <= 0 ? 0 : grad: ±0.0 and negative non-NaN results give +0.0.
EMBER_BFLOAT16_CLONES inline void relu_backward_bfloat16_bits(const std::uint16_t* grad, const std::uint16_t* result,
                                                               std::uint16_t* out, std::int64_t count) {
  for (std::int64_t i = 0; i < count; ++i) {
    const std::uint16_t magnitude = result[i] & 0x7FFF;
    const std::uint16_t not_positive = static_cast<std::uint16_t>(
        -static_cast<int>((magnitude == 0) | ((result[i] >> 15) & (magnitude <= 0x7F80))));
    out[i] = static_cast<std::uint16_t>(canonical_bfloat16(grad[i]) & ~not_positive);
  }
}

template <class F>
struct Opmath16 {
  static constexpr bool applies = false;
};
template <class T, class G>
struct Opmath16<element::InOpmath<T, G>> {
  static constexpr bool applies = true;
  using Float = G;  // the function on floats
};

constexpr std::int64_t kBlock16 = 256;  // floats per buffer: three buffers stay in L1

template <class T>
void widen_block(float* out, const T* x, std::int64_t count) {
  if constexpr (std::is_same_v<T, Half>) {
    wide::run(element::Cast<float, Half>{}, out, x, count);
  } else {
    for (std::int64_t i = 0; i < count; ++i) out[i] = static_cast<float>(x[i]);
  }
}

// f = InOpmath<T, G>: the run of f(x[i]) for a 16-bit T.
template <class T, class F>
void unary_run(const T* x, T* out, std::int64_t count, const F& f) {
  if constexpr (std::is_same_v<T, BFloat16> && std::is_same_v<std::decay_t<decltype(f.f)>, element::Relu<float>>) {
    relu_bfloat16_bits(bits_of(x), bits_of(out), count);
  } else if constexpr (std::is_same_v<T, BFloat16> && kBfloat16Clones && !wide::has_wide_run<decltype(f.f)>) {
    unary_run_bfloat16(x, out, count, f);
  } else {
    const auto& g = f.f;
    alignas(64) float in[kBlock16], result[kBlock16];
    for (std::int64_t i = 0; i < count; i += kBlock16) {
      const std::int64_t n = std::min(kBlock16, count - i);
      widen_block(in, x + i, n);
      if constexpr (wide::has_wide_run<std::decay_t<decltype(g)>>) {
        wide::run(g, result, in, n);
      } else {
        for (std::int64_t j = 0; j < n; ++j) result[j] = g(in[j]);
      }
      wide::run(element::Cast<T, float>{}, out + i, result, n);
    }
  }
}

template <class T, class F>
void binary_run(const T* x, std::int64_t x_step, const T* y, std::int64_t y_step, T* out, std::int64_t count,
                       const F& f) {
  if constexpr (std::is_same_v<T, BFloat16> && std::is_same_v<std::decay_t<decltype(f.f)>, element::ReluBackward<float>>) {
    if (x_step != 0 && y_step != 0) {
      relu_backward_bfloat16_bits(bits_of(x), bits_of(y), bits_of(out), count);
      return;
    }
  }
  if constexpr (std::is_same_v<T, BFloat16> && kBfloat16Clones && !wide::has_wide_run<decltype(f.f)>) {
    binary_run_bfloat16(x, x_step, y, y_step, out, count, f);
  } else {
    const auto& g = f.f;
    alignas(64) float a[kBlock16], b[kBlock16], result[kBlock16];
    const float x_value = static_cast<float>(x[0]), y_value = static_cast<float>(y[0]);
    for (std::int64_t i = 0; i < count; i += kBlock16) {
      const std::int64_t n = std::min(kBlock16, count - i);
      if (x_step != 0) widen_block(a, x + i, n);
      if (y_step != 0) widen_block(b, y + i, n);
      if (x_step != 0 && y_step != 0) {
        if constexpr (wide::has_wide_run<std::decay_t<decltype(g)>>) {
          wide::run(g, result, a, b, n);
        } else {
          for (std::int64_t j = 0; j < n; ++j) result[j] = g(a[j], b[j]);
        }
      } else if (x_step != 0) {
        for (std::int64_t j = 0; j < n; ++j) result[j] = g(a[j], y_value);
      } else {
        for (std::int64_t j = 0; j < n; ++j) result[j] = g(x_value, b[j]);
      }
      wide::run(element::Cast<T, float>{}, out + i, result, n);
    }
  }
}

// Do these runs compute F's contiguous runs? F = InOpmath<T, G> with float results stored as
// T (not a comparison's bool).
template <class Out, class F, class... Floats>
constexpr bool runs() {
  if constexpr (Opmath16<F>::applies) {
    using G = typename Opmath16<F>::Float;
    return !std::is_same_v<Out, bool> && std::is_same_v<std::invoke_result_t<const G&, Floats...>, float>;
  } else {
    return false;
  }
}

}  // namespace ember::cpu::sixteen_bit
