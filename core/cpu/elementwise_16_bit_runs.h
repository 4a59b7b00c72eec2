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
  if constexpr (std::is_same_v<T, BFloat16> && kBfloat16Clones && !wide::has_wide_run<decltype(f.f)>) {
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
