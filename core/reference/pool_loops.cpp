// core/reference/pool_loops.cpp — the reference pooling loops: max, average, adaptive average.
//
// Issue 19 (EMBER_KERNELS=reference). For each plane and each output position, the window
// (core/conv_plans.h) is visited tap by tap, row by row; taps outside the input are skipped.
// Max keeps the first maximum, and a NaN replaces whatever was kept (PyTorch's rule);
// average divides the window's sum by avg_window's divisor; adaptive average by the
// window's size. Each backward pass adds every output gradient back onto the input
// element(s) it came from. One element at a time, on the calling thread.
#include <algorithm>
#include <cmath>
#include <limits>

#include <ember/core/backend.h>
#include <ember/core/element_functions.h>
#include <ember/core/dispatch.h>
#include <ember/core/reference/reference_kernels.h>

namespace ember::reference {

namespace {

struct Window {
  std::int64_t h0, h1, w0, w1, step_h, step_w, divisor;
};

// The taps of output (y, x), clipped to the input.
Window window_of(const Pool2dPlan& p, std::int64_t y, std::int64_t x) {
  if (p.mode != PoolMode::Max) {  // average or adaptive average (core/conv_plans.h)
    const AvgWindow a = averaging_window(p, y, x);
    return {a.h0, a.h1, a.w0, a.w1, 1, 1, a.divisor};
  }
  // Max: every dilation-th tap of the kernel; the first in-bounds one is found by stepping.
  std::int64_t h0 = y * p.stride_h - p.pad_h, w0 = x * p.stride_w - p.pad_w;
  const std::int64_t h1 = std::min(h0 + (p.kernel_h - 1) * p.dilation_h + 1, p.in_h);
  const std::int64_t w1 = std::min(w0 + (p.kernel_w - 1) * p.dilation_w + 1, p.in_w);
  while (h0 < 0) h0 += p.dilation_h;
  while (w0 < 0) w0 += p.dilation_w;
  return {h0, h1, w0, w1, p.dilation_h, p.dilation_w, 1};
}

template <class T>
void forward_typed(const Pool2dPlan& p) {
  const T* in = static_cast<const T*>(p.input);
  T* out = static_cast<T*>(p.output);
  for (std::int64_t plane = 0; plane < p.planes; ++plane)
    for (std::int64_t y = 0; y < p.out_h; ++y)
      for (std::int64_t x = 0; x < p.out_w; ++x) {
        const Window win = window_of(p, y, x);
        const T* src = in + plane * p.in_h * p.in_w;
        const std::int64_t o = (plane * p.out_h + y) * p.out_w + x;
        if (p.mode == PoolMode::Max) {
          T best = T(-std::numeric_limits<float>::infinity());
          std::int64_t best_index = win.h0 * p.in_w + win.w0;
          for (std::int64_t h = win.h0; h < win.h1; h += win.step_h)
            for (std::int64_t w = win.w0; w < win.w1; w += win.step_w)
              if (src[h * p.in_w + w] > best || std::isnan(src[h * p.in_w + w])) {
                best = src[h * p.in_w + w];
                best_index = h * p.in_w + w;
              }
          out[o] = best;
          p.indices[o] = best_index;
        } else if constexpr (!is_reduced_float_v<T>) {  // 16-bit averages: widened (core/pooling.cpp)
          T sum = T(0);
          for (std::int64_t h = win.h0; h < win.h1; ++h)
            for (std::int64_t w = win.w0; w < win.w1; ++w) sum += src[h * p.in_w + w];
          out[o] = (win.h0 >= win.h1 || win.w0 >= win.w1) ? T(0) : sum / static_cast<T>(win.divisor);
        }
      }
}

template <class T>
void backward_typed(const Pool2dPlan& p) {
  const T* grad_out = static_cast<const T*>(p.output);
  T* grad_in = static_cast<T*>(p.input);
  for (std::int64_t e = 0; e < p.planes * p.in_h * p.in_w; ++e) grad_in[e] = T(0);
  for (std::int64_t plane = 0; plane < p.planes; ++plane)
    for (std::int64_t y = 0; y < p.out_h; ++y)
      for (std::int64_t x = 0; x < p.out_w; ++x) {
        const std::int64_t o = (plane * p.out_h + y) * p.out_w + x;
        T* dst = grad_in + plane * p.in_h * p.in_w;
        if (p.mode == PoolMode::Max) {
          // 16-bit floats: added in float and rounded after every addition, as PyTorch does.
          dst[p.indices[o]] = element::in_opmath<T>(element::Add<opmath_t<T>>{})(dst[p.indices[o]], grad_out[o]);
          continue;
        }
        if constexpr (!is_reduced_float_v<T>) {
          const Window win = window_of(p, y, x);
          for (std::int64_t h = win.h0; h < win.h1; ++h)
            for (std::int64_t w = win.w0; w < win.w1; ++w) dst[h * p.in_w + w] += grad_out[o] / static_cast<T>(win.divisor);
        }
      }
}

}  // namespace

// bfloat16 and float16: max pooling only (core/pooling.cpp widens averages).
void pool2d(const Pool2dPlan& p) {
  if (p.dtype == DType::Float64) forward_typed<double>(p);
  else if (p.dtype == DType::BFloat16) forward_typed<BFloat16>(p);
  else if (p.dtype == DType::Float16) forward_typed<Half>(p);
  else forward_typed<float>(p);
}

void pool2d_backward(const Pool2dPlan& p) {
  if (p.dtype == DType::Float64) backward_typed<double>(p);
  else if (p.dtype == DType::BFloat16) backward_typed<BFloat16>(p);
  else if (p.dtype == DType::Float16) backward_typed<Half>(p);
  else backward_typed<float>(p);
}

EMBER_REGISTER_KERNEL(::ember::pool2d_kernel, CPUReference, pool2d);
EMBER_REGISTER_KERNEL(::ember::pool2d_backward_kernel, CPUReference, pool2d_backward);

}  // namespace ember::reference
