// core/reference/conv_loops.cpp — the reference convolution: the direct seven-loop sum.
//
// Issue 19 (EMBER_KERNELS=reference, core/kernel_mode.h). Read this before the im2col +
// GEMM kernel of core/cpu/conv_kernels.cpp: it is the definition (core/conv_plans.h),
//
//   out[n, o, y, x] = bias[o] + Σ_{c, i, j} in[n, g*C_g + c, y*sH - pH + i*dH, x*sW - pW + j*dW] · w[o, c, i, j]
//
// seven loops (n, o, y, x, c, i, j), taps outside the input skipped (the zero padding), and
// its two gradients are the same loops with the roles of the arrays exchanged:
//   d in[n, g*C_g + c, h, w] += d out[n, o, y, x] · w[o, c, i, j]
//   d w[o, c, i, j]          += d out[n, o, y, x] · in[n, g*C_g + c, h, w]
// One element at a time, on the calling thread, products summed in loop order.
#include <algorithm>

#include <ember/core/backend.h>
#include <ember/core/dispatch.h>
#include <ember/core/reference/reference_kernels.h>

namespace ember::reference {

namespace {

// Calls tap(in_index, weight_index, out_index) for every (input, weight, output) triple the
// convolution multiplies: the seven loops, shared by the forward and both gradients.
template <class Tap>
void for_each_tap(const Conv2dPlan& p, const Tap& tap) {
  const std::int64_t in_per_group = p.in_channels / p.groups, out_per_group = p.out_channels / p.groups;
  for (std::int64_t n = 0; n < p.batch; ++n)
    for (std::int64_t o = 0; o < p.out_channels; ++o)
      for (std::int64_t y = 0; y < p.out_h; ++y)
        for (std::int64_t x = 0; x < p.out_w; ++x) {
          const std::int64_t out_index = ((n * p.out_channels + o) * p.out_h + y) * p.out_w + x;
          for (std::int64_t c = 0; c < in_per_group; ++c) {
            const std::int64_t in_channel = (o / out_per_group) * in_per_group + c;
            for (std::int64_t i = 0; i < p.kernel_h; ++i) {
              const std::int64_t h = y * p.stride_h - p.pad_h + i * p.dilation_h;
              if (h < 0 || h >= p.in_h) continue;
              for (std::int64_t j = 0; j < p.kernel_w; ++j) {
                const std::int64_t w = x * p.stride_w - p.pad_w + j * p.dilation_w;
                if (w < 0 || w >= p.in_w) continue;
                tap(((n * p.in_channels + in_channel) * p.in_h + h) * p.in_w + w,
                    ((o * in_per_group + c) * p.kernel_h + i) * p.kernel_w + j, out_index);
              }
            }
          }
        }
}

template <class T>
void forward_typed(const Conv2dPlan& p) {
  const T* in = static_cast<const T*>(p.input);
  const T* weight = static_cast<const T*>(p.weight);
  const T* bias = static_cast<const T*>(p.bias);
  T* out = static_cast<T*>(p.output);
  const std::int64_t plane = p.out_h * p.out_w;
  for (std::int64_t e = 0; e < p.batch * p.out_channels * plane; ++e)
    out[e] = bias != nullptr ? bias[(e / plane) % p.out_channels] : T(0);
  for_each_tap(p, [&](std::int64_t in_index, std::int64_t w_index, std::int64_t out_index) {
    out[out_index] += in[in_index] * weight[w_index];
  });
}

template <class T>
void backward_input_typed(const Conv2dPlan& p) {
  const T* grad_out = static_cast<const T*>(p.output);
  const T* weight = static_cast<const T*>(p.weight);
  T* grad_in = static_cast<T*>(p.input);
  std::fill(grad_in, grad_in + p.batch * p.in_channels * p.in_h * p.in_w, T(0));
  for_each_tap(p, [&](std::int64_t in_index, std::int64_t w_index, std::int64_t out_index) {
    grad_in[in_index] += grad_out[out_index] * weight[w_index];
  });
}

template <class T>
void backward_weight_typed(const Conv2dPlan& p) {
  const T* in = static_cast<const T*>(p.input);
  const T* grad_out = static_cast<const T*>(p.output);
  T* grad_weight = static_cast<T*>(p.weight);
  std::fill(grad_weight, grad_weight + p.out_channels * (p.in_channels / p.groups) * p.kernel_h * p.kernel_w, T(0));
  for_each_tap(p, [&](std::int64_t in_index, std::int64_t w_index, std::int64_t out_index) {
    grad_weight[w_index] += grad_out[out_index] * in[in_index];
  });
}

}  // namespace

void conv2d(const Conv2dPlan& p) {
  if (p.dtype == DType::Float64) forward_typed<double>(p);
  else forward_typed<float>(p);
}

void conv2d_backward_input(const Conv2dPlan& p) {
  if (p.dtype == DType::Float64) backward_input_typed<double>(p);
  else backward_input_typed<float>(p);
}

void conv2d_backward_weight(const Conv2dPlan& p) {
  if (p.dtype == DType::Float64) backward_weight_typed<double>(p);
  else backward_weight_typed<float>(p);
}

EMBER_REGISTER_KERNEL(::ember::conv2d_kernel, CPUReference, conv2d);
EMBER_REGISTER_KERNEL(::ember::conv2d_backward_input_kernel, CPUReference, conv2d_backward_input);
EMBER_REGISTER_KERNEL(::ember::conv2d_backward_weight_kernel, CPUReference, conv2d_backward_weight);

}  // namespace ember::reference
