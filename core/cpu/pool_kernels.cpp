// core/cpu/pool_kernels.cpp — the CPU pooling kernels: max, average and adaptive average,
// forward and backward (core/conv_plans.h, Pool2dPlan).
//
// Issue 19. Each plane (one channel of one sample) is independent, so the threads split the
// planes (core/parallel.h): a backward pass then adds into planes no other thread touches,
// with no atomics. Within a window the order of the sums and comparisons is PyTorch's CPU
// kernel's (rows, then columns), so the results match it: the max is the first maximum
// in that order, and any NaN wins over every number (a later NaN replaces an earlier one,
// as in PyTorch's `val > max || isnan(val)`). The bound is memory: each input element is
// read about kH*kW / (sH*sW) times, from cache. MaxPool2d(2) on float planes, a CNN's
// pooling, has an AVX-512 kernel of its own (core/cpu/max_pool_2x2_avx512.cpp, performance
// code) where the CPU has it; the loops here are the reading version and everyone else's.
#include <algorithm>
#include <cstdint>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include <ember/core/backend.h>
#include <ember/core/cpu/cpu_kernels.h>
#include <ember/core/cpu/gemm_kernels.h>
#include <ember/core/cpu/sixteen_bit_words.h>
#include <ember/core/dispatch.h>
#include <ember/core/element_functions.h>
#include <ember/core/parallel.h>

namespace ember::cpu {

namespace {

// Planes per chunk so that a chunk holds at least ~kDefaultGrainSize input elements.
std::int64_t plane_grain(const Pool2dPlan& p) {
  const std::int64_t plane = std::max<std::int64_t>(1, std::max(p.in_h * p.in_w, p.out_h * p.out_w));
  return std::max<std::int64_t>(1, kDefaultGrainSize / plane);
}

template <class T>
void max_plane(const Pool2dPlan& p, const T* in, T* out, std::int64_t* indices) {
  for (std::int64_t y = 0; y < p.out_h; ++y) {
    std::int64_t h0 = y * p.stride_h - p.pad_h;
    const std::int64_t h1 = std::min(h0 + (p.kernel_h - 1) * p.dilation_h + 1, p.in_h);
    while (h0 < 0) h0 += p.dilation_h;
    for (std::int64_t x = 0; x < p.out_w; ++x) {
      std::int64_t w0 = x * p.stride_w - p.pad_w;
      const std::int64_t w1 = std::min(w0 + (p.kernel_w - 1) * p.dilation_w + 1, p.in_w);
      while (w0 < 0) w0 += p.dilation_w;
      std::int64_t best_index = h0 * p.in_w + w0;
      T best = T(-std::numeric_limits<float>::infinity());
      for (std::int64_t h = h0; h < h1; h += p.dilation_h) {
        for (std::int64_t w = w0; w < w1; w += p.dilation_w) {
          const T value = in[h * p.in_w + w];
          if (value > best || std::isnan(value)) {
            best = value;
            best_index = h * p.in_w + w;
          }
        }
      }
      out[y * p.out_w + x] = best;
      indices[y * p.out_w + x] = best_index;
    }
  }
}

// The common case, MaxPool2d(k) on a plane it tiles: no padding, no dilation, every window
// wholly inside. The loop runs along an output row for one window row at a time, so the
// pick "does this value replace the best so far" is the same select on neighbouring outputs:
// the compiler turns it into vector compares and blends, where the per-window loop of
// max_plane is a branch the predictor loses (after a ReLU, which value of a window is
// largest is a coin toss; the branch cost 3x this loop). A window row's values for
// neighbouring outputs are interleaved in memory; reading them in one iteration (kWidth of
// them, a compile-time count) lets the vectoriser split them with shuffles instead of giving
// up on a strided load. `which` holds the window position of each output's best so far,
// turned into a plane index at the end of the row. Same order and the same rule as
// max_plane (rows, then columns; the first maximum; a NaN wins and a later NaN replaces
// it), so the same maximum and index.
template <class T, int kWidth>
void max_plane_inside(const Pool2dPlan& p, const T* __restrict in, T* __restrict out,
                      std::int64_t* __restrict indices, std::int32_t* __restrict which) {
  for (std::int64_t y = 0; y < p.out_h; ++y) {
    T* __restrict best = out + y * p.out_w;
    for (std::int64_t x = 0; x < p.out_w; ++x) {
      best[x] = T(-std::numeric_limits<float>::infinity());
      which[x] = 0;
    }
    for (std::int32_t i = 0; i < static_cast<std::int32_t>(p.kernel_h); ++i) {
      const T* __restrict row = in + (y * p.stride_h + i) * p.in_w;
      for (std::int64_t x = 0; x < p.out_w; ++x) {
        for (int j = 0; j < kWidth; ++j) {
          const T value = row[x * kWidth + j];
          const bool take = (value > best[x]) | (value != value);  // value != value: NaN
          best[x] = take ? value : best[x];
          which[x] = take ? i * kWidth + j : which[x];
        }
      }
    }
    std::int64_t* row_indices = indices + y * p.out_w;
    for (std::int64_t x = 0; x < p.out_w; ++x) {
      row_indices[x] = (y * p.stride_h + which[x] / kWidth) * p.in_w + x * kWidth + which[x] % kWidth;
    }
  }
}

// Whether max_plane_inside<T, 2> serves p: windows two columns wide, side by side (stride 2),
// wholly inside the plane (no padding, unit dilation), and a window position fits an int32.
inline bool windows_inside(const Pool2dPlan& p) {
  return p.kernel_w == 2 && p.stride_w == 2 && p.kernel_h <= std::numeric_limits<std::int32_t>::max() / 2 &&
         p.pad_h == 0 && p.pad_w == 0 && p.dilation_h == 1 && p.dilation_w == 1 &&
         (p.out_h - 1) * p.stride_h + p.kernel_h <= p.in_h && (p.out_w - 1) * p.stride_w + p.kernel_w <= p.in_w;
}

// Which vectorised MaxPool2d(2) kernel serves p, if any: core/cpu/max_pool_2x2_avx512.cpp or
// max_pool_2x2_avx2.cpp, for max pooling with windows inside the plane (windows_inside with a
// 2-row window and stride 2) and row offsets that fit their int32 lanes, chosen as the GEMM's
// instruction set is (so EMBER_GEMM_KERNEL=avx2|portable selects them too).
enum class Max2x2 { kNone, kAvx2, kAvx512 };
inline Max2x2 max_2x2_kernel(const Pool2dPlan& p) {
  if (p.mode != PoolMode::Max || !windows_inside(p) || p.kernel_h != 2 || p.stride_h != 2 ||
      p.in_w >= std::numeric_limits<std::int32_t>::max() / 3)
    return Max2x2::kNone;
  switch (active_vector_isa()) {
    case VectorIsa::kAvx512: return Max2x2::kAvx512;
    case VectorIsa::kAvx2: return Max2x2::kAvx2;
    case VectorIsa::kPortable: break;
  }
  return Max2x2::kNone;
}

template <class T>
void avg_plane(const Pool2dPlan& p, const T* in, T* out) {
  for (std::int64_t y = 0; y < p.out_h; ++y) {
    for (std::int64_t x = 0; x < p.out_w; ++x) {
      const auto [h0, h1, w0, w1, divisor] = averaging_window(p, y, x);
      if (h0 >= h1 || w0 >= w1) {  // a window wholly in the padding
        out[y * p.out_w + x] = T(0);
        continue;
      }
      T sum = T(0);
      for (std::int64_t h = h0; h < h1; ++h)
        for (std::int64_t w = w0; w < w1; ++w) sum += in[h * p.in_w + w];
      out[y * p.out_w + x] = sum / static_cast<T>(divisor);
    }
  }
}

// grad_in starts zeroed; adds each output gradient back onto its window.
template <class T>
void avg_plane_backward(const Pool2dPlan& p, const T* grad_out, T* grad_in) {
  for (std::int64_t y = 0; y < p.out_h; ++y) {
    for (std::int64_t x = 0; x < p.out_w; ++x) {
      const auto [h0, h1, w0, w1, divisor] = averaging_window(p, y, x);
      const T share = grad_out[y * p.out_w + x] / static_cast<T>(divisor);
      for (std::int64_t h = h0; h < h1; ++h)
        for (std::int64_t w = w0; w < w1; ++w) grad_in[h * p.in_w + w] += share;
    }
  }
}

// T is float, double, or a 16-bit float (max pooling only: core/pooling.cpp widens averages).
// A 16-bit plane is widened to float in a per-thread buffer (exact) and pooled by the float
// loops, which vectorise where 16-bit compares would not; the outputs round back exactly
// (each is one of the inputs).
// The 16-bit planes' conversions, as loops the compiler vectorises. bfloat16 widens by a
// shift and narrows exactly (each pooled value is one of the inputs), NaN to 0x7FC0 as every
// bfloat16 rounding in ember; float16 goes through its conversion functions.
template <class T>
void widen_plane(const T* in, std::int64_t n, float* out) {
  if constexpr (std::is_same_v<T, BFloat16>) {
    const std::uint16_t* bits = bits_of(in);
    auto* wide = reinterpret_cast<std::uint32_t*>(out);             // NOLINT: written as bits
    for (std::int64_t i = 0; i < n; ++i) wide[i] = std::uint32_t{bits[i]} << 16;
  } else {
    std::copy(in, in + n, out);
  }
}

template <class T>
void narrow_plane(const float* in, std::int64_t n, T* out) {
  if constexpr (std::is_same_v<T, BFloat16>) {
    const auto* wide = reinterpret_cast<const std::uint32_t*>(in);  // NOLINT: read as bits
    std::uint16_t* bits = bits_of(out);
    for (std::int64_t i = 0; i < n; ++i)
      bits[i] = (wide[i] & 0x7FFFFFFFu) > 0x7F800000u ? std::uint16_t{0x7FC0} : static_cast<std::uint16_t>(wide[i] >> 16);
  } else {
    std::copy(in, in + n, out);
  }
}

// plane[0, n) = +0.0, by bits for the 16-bit floats (std::fill over their classes stores one
// element at a time).
template <class T>
void zero_plane(T* plane, std::int64_t n) {
  if constexpr (SixteenBitFloat<T>) std::fill_n(bits_of(plane), n, std::uint16_t{0});
  else std::fill_n(plane, n, T(0));
}

// No input element lies in two windows: each receives at most one gradient.
inline bool windows_disjoint(const Pool2dPlan& p) {
  return p.stride_h >= (p.kernel_h - 1) * p.dilation_h + 1 && p.stride_w >= (p.kernel_w - 1) * p.dilation_w + 1;
}

// +0.0 + g rounded to bfloat16, by bits: g itself, except -0.0 (gives +0.0) and NaN (0x7FC0).
inline std::uint16_t bfloat16_plus_zero(std::uint16_t g) {
  const std::uint16_t magnitude = g & 0x7FFF;
  return magnitude > 0x7F80 ? std::uint16_t{0x7FC0} : magnitude == 0 ? std::uint16_t{0} : g;
}

template <class T>
void pool2d_typed(const Pool2dPlan& p) {
  constexpr bool widen = is_reduced_float_v<T>;
  using Compute = std::conditional_t<widen, float, T>;
  const T* input = static_cast<const T*>(p.input);
  T* output = static_cast<T*>(p.output);
  const std::int64_t in_plane = p.in_h * p.in_w, out_plane = p.out_h * p.out_w;
  const bool inside = windows_inside(p);
  const Max2x2 kernel = std::is_same_v<Compute, float> ? max_2x2_kernel(p) : Max2x2::kNone;
  if constexpr (std::is_same_v<T, BFloat16>) {
    if (kernel == Max2x2::kAvx512) {  // pooled as read, no widened planes
      parallel_for(0, p.planes, plane_grain(p), [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t plane = begin; plane < end; ++plane)
          max_pool_2x2_plane_avx512(bits_of(input + plane * in_plane), p.in_w, p.out_h, p.out_w,
                                    bits_of(output + plane * out_plane), p.indices + plane * out_plane);
      });
      return;
    }
  }
  parallel_for(0, p.planes, plane_grain(p), [&](std::int64_t begin, std::int64_t end) {
    std::vector<std::int32_t> which(static_cast<std::size_t>(inside ? p.out_w : 0));
    std::vector<Compute> wide_in(widen ? in_plane : 0), wide_out(widen ? out_plane : 0);
    for (std::int64_t plane = begin; plane < end; ++plane) {
      const Compute* in;
      Compute* out;
      if constexpr (widen) {
        widen_plane(input + plane * in_plane, in_plane, wide_in.data());
        in = wide_in.data();
        out = wide_out.data();
      } else {
        in = input + plane * in_plane;
        out = output + plane * out_plane;
      }
      // Average pooling keeps no indices (p.indices is null): no pointer arithmetic on null.
      std::int64_t* indices = p.indices ? p.indices + plane * out_plane : nullptr;
      if (kernel != Max2x2::kNone) {
        if constexpr (std::is_same_v<Compute, float>) {
          if (kernel == Max2x2::kAvx512) max_pool_2x2_plane_avx512(in, p.in_w, p.out_h, p.out_w, out, indices);
          else max_pool_2x2_plane_avx2(in, p.in_w, p.out_h, p.out_w, out, indices);
        }
      } else if (p.mode == PoolMode::Max && inside) {
        max_plane_inside<Compute, 2>(p, in, out, indices, which.data());
      } else if (p.mode == PoolMode::Max) {
        max_plane(p, in, out, indices);
      } else if constexpr (!widen) {
        avg_plane(p, in, out);
      }
      if constexpr (widen) narrow_plane(wide_out.data(), out_plane, output + plane * out_plane);
    }
  });
}

template <class T>
void pool2d_backward_typed(const Pool2dPlan& p) {
  const T* grad_out = static_cast<const T*>(p.output);
  T* grad_in = static_cast<T*>(p.input);
  const std::int64_t in_plane = p.in_h * p.in_w, out_plane = p.out_h * p.out_w;
  const bool disjoint = windows_disjoint(p);
  constexpr bool has_2x2_kernel = std::is_same_v<T, float> || std::is_same_v<T, BFloat16>;
  const Max2x2 kernel = has_2x2_kernel ? max_2x2_kernel(p) : Max2x2::kNone;
  const bool dense_2x2 = std::is_same_v<T, float> ? kernel != Max2x2::kNone
                                                  : kernel == Max2x2::kAvx512 && cpu_has_avx512bw();  // 16-bit masked loads
  parallel_for(0, p.planes, plane_grain(p), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t plane = begin; plane < end; ++plane) {
      T* gi = grad_in + plane * in_plane;
      const T* go = grad_out + plane * out_plane;
      if constexpr (has_2x2_kernel) {
        if (dense_2x2) {  // every input element written once (core/cpu/max_pool_2x2_avx512.cpp, _avx2.cpp)
          const std::int64_t* index = p.indices + plane * out_plane;
          bool done = false;
          if constexpr (std::is_same_v<T, float>)
            done = kernel == Max2x2::kAvx512
                       ? max_pool_2x2_backward_plane_avx512(go, index, p.in_h, p.in_w, p.out_h, p.out_w, gi)
                       : max_pool_2x2_backward_plane_avx2(go, index, p.in_h, p.in_w, p.out_h, p.out_w, gi);
          else
            done = max_pool_2x2_backward_plane_avx512(bits_of(go), index, p.in_h, p.in_w, p.out_h, p.out_w, bits_of(gi));
          if (done) continue;  // else an index outside its window: scattered below
        }
      }
      zero_plane(gi, in_plane);
      if constexpr (std::is_same_v<T, BFloat16>) {
        if (p.mode == PoolMode::Max && disjoint) {  // the one addition below, by bits
          const std::int64_t* index = p.indices + plane * out_plane;
          for (std::int64_t o = 0; o < out_plane; ++o) gi[index[o]].bits = bfloat16_plus_zero(go[o].bits);
          continue;
        }
      }
      if (p.mode == PoolMode::Max) {
        // 16-bit floats: one rounding per addition, in output order, as PyTorch's (overlapping
        // windows only: otherwise each input element receives at most one gradient).
        const auto add = element::in_opmath<T>(element::Add<opmath_t<T>>{});
        const std::int64_t* index = p.indices + plane * out_plane;
        for (std::int64_t o = 0; o < out_plane; ++o) gi[index[o]] = add(gi[index[o]], go[o]);
      } else if constexpr (!is_reduced_float_v<T>) {
        avg_plane_backward(p, go, gi);
      }
    }
  });
}

}  // namespace

// bfloat16 and float16: max pooling only (a max is exact; core/pooling.cpp widens averages).
void pool2d(const Pool2dPlan& p) {
  if (p.dtype == DType::Float64) pool2d_typed<double>(p);
  else if (p.dtype == DType::BFloat16) pool2d_typed<BFloat16>(p);
  else if (p.dtype == DType::Float16) pool2d_typed<Half>(p);
  else pool2d_typed<float>(p);
}

void pool2d_backward(const Pool2dPlan& p) {
  if (p.dtype == DType::Float64) pool2d_backward_typed<double>(p);
  else if (p.dtype == DType::BFloat16) pool2d_backward_typed<BFloat16>(p);
  else if (p.dtype == DType::Float16) pool2d_backward_typed<Half>(p);
  else pool2d_backward_typed<float>(p);
}

EMBER_REGISTER_KERNEL(::ember::pool2d_kernel, CPU, pool2d);
EMBER_REGISTER_KERNEL(::ember::pool2d_backward_kernel, CPU, pool2d_backward);

}  // namespace ember::cpu
