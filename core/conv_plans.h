// core/conv_plans.h — the plain-data plans of the convolution and pooling kernels
// (core/backend.h: conv2d_kernel, conv2d_backward_input_kernel, conv2d_backward_weight_kernel,
// pool2d_kernel, pool2d_backward_kernel).
//
// Issue 19. Like core/fused_plans.h: POD, raw pointers, no ownership. The native layer
// (core/conv.cpp, core/pooling.cpp) has already checked every size, made every operand
// contiguous (NCHW, weight [C_out, C_in / groups, kH, kW]) and allocated the outputs; a
// kernel only computes. The same plan describes the forward and both backward passes of a
// convolution: each kernel reads two of input / weight / output and writes the third.
#pragma once

#include <cstdint>

#include <ember/core/dtype.h>
#include <ember/core/host_device.h>

namespace ember {

// A 2-D convolution, PyTorch's (cross-correlation, no kernel flip):
//   out[n, o, y, x] = bias[o] + sum_{c in o's group, i, j}
//       in[n, c, y*sH - pH + i*dH, x*sW - pW + j*dW] * w[o, c - group_start, i, j]
// (positions outside the input read as zero: the padding).
//   conv2d_kernel                  reads input, weight, bias (may be null), writes output
//   conv2d_backward_input_kernel   reads output (= d loss / d out), weight; writes input (= d loss / d in)
//   conv2d_backward_weight_kernel  reads input, output (= d loss / d out); writes weight (= d loss / d w)
// The backward kernels overwrite their result (they do not accumulate into it).
struct Conv2dPlan {
  std::int64_t batch = 0, in_channels = 0, out_channels = 0, groups = 1;
  std::int64_t in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  std::int64_t kernel_h = 0, kernel_w = 0;
  std::int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dilation_h = 1, dilation_w = 1;
  void* input = nullptr;   // [batch, in_channels, in_h, in_w]
  void* weight = nullptr;  // [out_channels, in_channels / groups, kernel_h, kernel_w]
  const void* bias = nullptr;  // [out_channels] or nullptr (forward only)
  void* output = nullptr;  // [batch, out_channels, out_h, out_w]
  DType dtype = DType::Float32;
  int device = -1;  // as StridedPlan::device
};

enum class PoolMode {
  Max,          // writes indices: the flat position h * in_w + w of each window's maximum
  Avg,          // count_include_pad / divisor_override as avg_pool2d
  AdaptiveAvg,  // window of output y: rows [floor(y*in_h/out_h), ceil((y+1)*in_h/out_h))
};

// 2-D pooling over `planes` = batch * channels independent planes of in_h x in_w.
//   pool2d_kernel           reads input; writes output (and indices for Max)
//   pool2d_backward_kernel  reads output (= d loss / d out) (and indices for Max);
//                           overwrites input (= d loss / d in)
// For Max, the window is scanned row by row; the first maximum wins, and a NaN wins over
// any number (the first NaN), as PyTorch's CPU kernel. The kernel/stride/padding/dilation
// fields are unused by AdaptiveAvg.
struct Pool2dPlan {
  PoolMode mode = PoolMode::Max;
  std::int64_t planes = 0, in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  std::int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0;
  std::int64_t dilation_h = 1, dilation_w = 1;
  bool count_include_pad = true;
  std::int64_t divisor_override = 0;  // 0: none
  void* input = nullptr;             // [planes, in_h, in_w]
  void* output = nullptr;            // [planes, out_h, out_w]
  std::int64_t* indices = nullptr;   // [planes, out_h, out_w], Max only
  DType dtype = DType::Float32;
  int device = -1;  // as StridedPlan::device
};

// The averaging window of avg_pool2d for output (y, x), shared by every backend so they
// divide by the same count. [h0, h1) x [w0, w1) is clipped to the input; divisor is what
// the sum is divided by.
struct AvgWindow {
  std::int64_t h0, h1, w0, w1, divisor;
};
EMBER_HOST_DEVICE inline AvgWindow avg_window(const Pool2dPlan& p, std::int64_t y, std::int64_t x) {
  std::int64_t h0 = y * p.stride_h - p.pad_h, w0 = x * p.stride_w - p.pad_w;
  // The padded window may reach past the padding on the far side with ceil_mode; PyTorch
  // counts only up to in + pad.
  std::int64_t h1 = h0 + p.kernel_h < p.in_h + p.pad_h ? h0 + p.kernel_h : p.in_h + p.pad_h;
  std::int64_t w1 = w0 + p.kernel_w < p.in_w + p.pad_w ? w0 + p.kernel_w : p.in_w + p.pad_w;
  const std::int64_t padded_count = (h1 - h0) * (w1 - w0);
  h0 = h0 < 0 ? 0 : h0;
  w0 = w0 < 0 ? 0 : w0;
  h1 = h1 > p.in_h ? p.in_h : h1;
  w1 = w1 > p.in_w ? p.in_w : w1;
  std::int64_t divisor = p.divisor_override != 0 ? p.divisor_override
                         : p.count_include_pad   ? padded_count
                                                 : (h1 - h0) * (w1 - w0);
  return {h0, h1, w0, w1, divisor};
}

// The adaptive window [start, end) of output index i along a dim of `in` -> `out` elements.
EMBER_HOST_DEVICE inline std::int64_t adaptive_start(std::int64_t i, std::int64_t out, std::int64_t in) { return (i * in) / out; }
EMBER_HOST_DEVICE inline std::int64_t adaptive_end(std::int64_t i, std::int64_t out, std::int64_t in) {
  return ((i + 1) * in + out - 1) / out;
}

// The window that output (y, x) averages, for avg_pool2d (avg_window) or
// adaptive_avg_pool2d (adaptive_start/end, divided by its own size): one definition for the
// forward and backward kernels of every backend.
EMBER_HOST_DEVICE inline AvgWindow averaging_window(const Pool2dPlan& p, std::int64_t y, std::int64_t x) {
  if (p.mode != PoolMode::AdaptiveAvg) return avg_window(p, y, x);
  const std::int64_t h0 = adaptive_start(y, p.out_h, p.in_h), h1 = adaptive_end(y, p.out_h, p.in_h);
  const std::int64_t w0 = adaptive_start(x, p.out_w, p.in_w), w1 = adaptive_end(x, p.out_w, p.in_w);
  return {h0, h1, w0, w1, (h1 - h0) * (w1 - w0)};
}

}  // namespace ember
