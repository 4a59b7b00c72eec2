// cuda/kernels/pool.cuh — max / average / adaptive average pooling and their gradients on
// the GPU (Pool2dPlan, core/conv_plans.h).
//
// Issue 19. Forward: one thread per output element scans its window row by row with the
// CPU's rules (first maximum wins, a NaN wins; avg_window's divisor). Backward: one thread
// per *input* element gathers the gradients of the outputs whose window holds it — for max,
// the outputs whose saved index is this element; for average, every output whose (clipped)
// window covers it, divided by that output's divisor — in output order, so there are no
// atomics and the sums are deterministic and equal to the CPU's order. The candidate
// outputs of an input row h are those y with y*s - p <= h <= y*s - p + (k-1)*d (all of
// them for the adaptive windows, which may overlap arbitrarily). Bound: memory.
#pragma once

#include <cstdint>
#include <limits>

#include <ember/core/conv_plans.h>
#include <ember/cuda/kernels/device_support.cuh>

EMBER_KERNELS_BEGIN

using ::ember::Pool2dPlan;
using ::ember::PoolMode;

template <class T>
EMBER_GLOBAL void pool2d_forward_kernel(Pool2dPlan p) {
  const std::int64_t out_plane = p.out_h * p.out_w, total = p.planes * out_plane;
  const T* input = static_cast<const T*>(p.input);
  T* output = static_cast<T*>(p.output);
  for (std::int64_t e = global_thread_index(); e < total; e += grid_thread_count()) {
    const std::int64_t x = e % p.out_w, y = (e / p.out_w) % p.out_h, plane = e / out_plane;
    const T* in = input + plane * p.in_h * p.in_w;
    if (p.mode == PoolMode::Max) {
      std::int64_t h0 = y * p.stride_h - p.pad_h, w0 = x * p.stride_w - p.pad_w;
      const std::int64_t h_end = h0 + (p.kernel_h - 1) * p.dilation_h + 1;
      const std::int64_t w_end = w0 + (p.kernel_w - 1) * p.dilation_w + 1;
      const std::int64_t h1 = h_end < p.in_h ? h_end : p.in_h, w1 = w_end < p.in_w ? w_end : p.in_w;
      while (h0 < 0) h0 += p.dilation_h;
      while (w0 < 0) w0 += p.dilation_w;
      std::int64_t best_index = h0 * p.in_w + w0;
      T best = -std::numeric_limits<T>::infinity();
      for (std::int64_t h = h0; h < h1; h += p.dilation_h)
        for (std::int64_t w = w0; w < w1; w += p.dilation_w) {
          const T value = in[h * p.in_w + w];
          if (value > best || value != value) {  // value != value: NaN
            best = value;
            best_index = h * p.in_w + w;
          }
        }
      output[e] = best;
      p.indices[e] = best_index;
      continue;
    }
    const auto [h0, h1, w0, w1, divisor] = averaging_window(p, y, x);
    T sum = T(0);
    for (std::int64_t h = h0; h < h1; ++h)
      for (std::int64_t w = w0; w < w1; ++w) sum += in[h * p.in_w + w];
    output[e] = (h0 >= h1 || w0 >= w1) ? T(0) : sum / static_cast<T>(divisor);
  }
}

// The output rows (or columns) whose window may hold input row h: [first, last].
EMBER_DEVICE void candidate_range(std::int64_t h, std::int64_t out, std::int64_t kernel, std::int64_t stride,
                                  std::int64_t pad, std::int64_t dilation, std::int64_t* first, std::int64_t* last) {
  const std::int64_t low = h + pad - (kernel - 1) * dilation;  // y * stride >= low
  *first = low <= 0 ? 0 : (low + stride - 1) / stride;
  const std::int64_t high = (h + pad) / stride;  // y * stride <= h + pad
  *last = high < out - 1 ? high : out - 1;
}

template <class T>
EMBER_GLOBAL void pool2d_backward_kernel(Pool2dPlan p) {
  const std::int64_t in_plane = p.in_h * p.in_w, out_plane = p.out_h * p.out_w, total = p.planes * in_plane;
  const T* grad_out = static_cast<const T*>(p.output);
  T* grad_in = static_cast<T*>(p.input);
  for (std::int64_t e = global_thread_index(); e < total; e += grid_thread_count()) {
    const std::int64_t w = e % p.in_w, h = (e / p.in_w) % p.in_h, plane = e / in_plane;
    const T* go = grad_out + plane * out_plane;
    std::int64_t y0 = 0, y1 = p.out_h - 1, x0 = 0, x1 = p.out_w - 1;
    if (p.mode != PoolMode::AdaptiveAvg) {
      const std::int64_t dh = p.mode == PoolMode::Max ? p.dilation_h : 1, dw = p.mode == PoolMode::Max ? p.dilation_w : 1;
      candidate_range(h, p.out_h, p.kernel_h, p.stride_h, p.pad_h, dh, &y0, &y1);
      candidate_range(w, p.out_w, p.kernel_w, p.stride_w, p.pad_w, dw, &x0, &x1);
    }
    T sum = T(0);
    for (std::int64_t y = y0; y <= y1; ++y)
      for (std::int64_t x = x0; x <= x1; ++x) {
        if (p.mode == PoolMode::Max) {
          if (p.indices[plane * out_plane + y * p.out_w + x] == h * p.in_w + w) sum += go[y * p.out_w + x];
          continue;
        }
        const auto [a0, a1, b0, b1, divisor] = averaging_window(p, y, x);
        if (h >= a0 && h < a1 && w >= b0 && w < b1) sum += go[y * p.out_w + x] / static_cast<T>(divisor);
      }
    grad_in[e] = sum;
  }
}

inline void dispatch_pool2d(const Pool2dPlan& plan, cudaStream_t stream) {
  if (plan.planes * plan.out_h * plan.out_w == 0) return;
  EMBER_DISPATCH_FLOATING(plan.dtype, {
    auto kernel = &pool2d_forward_kernel<scalar_t>;
    EMBER_LAUNCH(kernel, dim3(blocks_for(plan.planes * plan.out_h * plan.out_w, 256)), dim3(256), stream, plan);
  });
}

inline void dispatch_pool2d_backward(const Pool2dPlan& plan, cudaStream_t stream) {
  if (plan.planes * plan.in_h * plan.in_w == 0) return;
  EMBER_DISPATCH_FLOATING(plan.dtype, {
    auto kernel = &pool2d_backward_kernel<scalar_t>;
    EMBER_LAUNCH(kernel, dim3(blocks_for(plan.planes * plan.in_h * plan.in_w, 256)), dim3(256), stream, plan);
  });
}

EMBER_KERNELS_END
