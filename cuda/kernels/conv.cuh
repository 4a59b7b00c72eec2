// cuda/kernels/conv.cuh — conv2d and its two gradients on the GPU: im2col / col2im kernels
// feeding the CUDA GEMM of cuda/kernels/gemm.cuh (Conv2dPlan, core/conv_plans.h).
//
// Issue 19. The same lowering as the CPU's (core/cpu/conv_kernels.cpp), batched: for one
// group, im2col writes the columns of a chunk of samples, cols[n, K, L] (K = C_g*kH*kW,
// L = oH*oW; one thread per element, zero where the tap falls in the padding), and one
// batched GEMM computes out[n, O_g, L] = W_g · cols[n] for the whole chunk (W_g read with
// batch stride 0). The input gradient is the batched GEMM d cols[n] = W_gᵀ · d out[n] and
// col2im, which gathers: one thread per input element sums the column entries that read it
// (the taps (i, j) whose output position is on the stride grid), so no atomics and a fixed
// summation order. The weight gradient is d W_g = Σ_n d out[n] · cols[n]ᵀ: one batched GEMM
// writes every sample's product of a chunk (partials[n, O_g, K]), then the sum over the
// samples is the reduction kernel's, over a fixed order, so it is deterministic as well.
// (It once added sample after sample onto one result with beta = 1: a [O_g, K] product is a
// tile or two, so the whole GPU waited on one block per sample — 0.02× of cuBLAS for the first
// CNN layer's forward + backward on an H200.)
// The scratch buffers (cols, partials) come from the caller's ScratchAllocator (the caching
// allocator on the GPU) and are capped at kConvScratchElements by chunking the batch. The
// GEMMs go through dispatch_gemm_auto (gemm_fast.cuh: the 128×128 kernel for large ones).
// Bound: the GEMMs for wide layers; im2col/col2im are memory-bound copies of K·L elements.
#pragma once

#include <cstdint>

#include <ember/core/conv_plans.h>
#include <ember/core/strided_index.h>
#include <ember/cuda/kernels/device_support.cuh>
#include <ember/cuda/kernels/gemm.cuh>
#include <ember/cuda/kernels/gemm_fast.cuh>
#include <ember/cuda/kernels/reduce.cuh>

EMBER_KERNELS_BEGIN

using ::ember::Conv2dPlan;

constexpr std::int64_t kConvScratchElements = std::int64_t{1} << 26;  // 256 MiB of float

// cols[s, k, l] for samples [first, first + count) of group `group`.
template <class T>
EMBER_GLOBAL void im2col_kernel(Conv2dPlan p, const T* input, T* cols, std::int64_t first, std::int64_t count,
                                std::int64_t group) {
  const std::int64_t cg = p.in_channels / p.groups, k_size = cg * p.kernel_h * p.kernel_w;
  const std::int64_t l_size = p.out_h * p.out_w, total = count * k_size * l_size;
  for (std::int64_t e = global_thread_index(); e < total; e += grid_thread_count()) {
    const std::int64_t l = e % l_size, k = (e / l_size) % k_size, s = e / (l_size * k_size);
    const std::int64_t j = k % p.kernel_w, i = (k / p.kernel_w) % p.kernel_h, c = k / (p.kernel_w * p.kernel_h);
    const std::int64_t x = l % p.out_w, y = l / p.out_w;
    const std::int64_t h = y * p.stride_h - p.pad_h + i * p.dilation_h;
    const std::int64_t w = x * p.stride_w - p.pad_w + j * p.dilation_w;
    const std::int64_t channel = group * cg + c;
    cols[e] = (h >= 0 && h < p.in_h && w >= 0 && w < p.in_w)
                  ? input[(((first + s) * p.in_channels + channel) * p.in_h + h) * p.in_w + w]
                  : T(0);
  }
}

// grad_input[n, group's channels] = col2im(cols[s]): each input element gathers its taps.
template <class T>
EMBER_GLOBAL void col2im_kernel(Conv2dPlan p, const T* cols, T* grad_input, std::int64_t first, std::int64_t count,
                                std::int64_t group) {
  const std::int64_t cg = p.in_channels / p.groups, k_size = cg * p.kernel_h * p.kernel_w;
  const std::int64_t l_size = p.out_h * p.out_w, plane = p.in_h * p.in_w, total = count * cg * plane;
  for (std::int64_t e = global_thread_index(); e < total; e += grid_thread_count()) {
    const std::int64_t w = e % p.in_w, h = (e / p.in_w) % p.in_h, c = (e / plane) % cg, s = e / (plane * cg);
    T sum = T(0);
    for (std::int64_t i = 0; i < p.kernel_h; ++i) {
      const std::int64_t y_scaled = h + p.pad_h - i * p.dilation_h;
      if (y_scaled < 0 || y_scaled % p.stride_h != 0) continue;
      const std::int64_t y = y_scaled / p.stride_h;
      if (y >= p.out_h) continue;
      for (std::int64_t j = 0; j < p.kernel_w; ++j) {
        const std::int64_t x_scaled = w + p.pad_w - j * p.dilation_w;
        if (x_scaled < 0 || x_scaled % p.stride_w != 0) continue;
        const std::int64_t x = x_scaled / p.stride_w;
        if (x >= p.out_w) continue;
        sum += cols[(s * k_size + (c * p.kernel_h + i) * p.kernel_w + j) * l_size + y * p.out_w + x];
      }
    }
    grad_input[(((first + s) * p.in_channels + group * cg + c) * p.in_h + h) * p.in_w + w] = sum;
  }
}

// out[n, o, l] = bias[o] (the GEMM then adds onto it with beta = 1).
template <class T>
EMBER_GLOBAL void fill_bias_kernel(Conv2dPlan p, T* output, const T* bias) {
  const std::int64_t l_size = p.out_h * p.out_w, total = p.batch * p.out_channels * l_size;
  for (std::int64_t e = global_thread_index(); e < total; e += grid_thread_count())
    output[e] = bias[(e / l_size) % p.out_channels];
}

namespace conv_detail {

struct Sizes {
  std::int64_t cg, og, k, l, chunk;
};
inline Sizes sizes_of(const Conv2dPlan& p, std::int64_t scratch_elements = kConvScratchElements) {
  const std::int64_t cg = p.in_channels / p.groups, og = p.out_channels / p.groups;
  const std::int64_t k = cg * p.kernel_h * p.kernel_w, l = p.out_h * p.out_w;
  std::int64_t chunk = k * l > 0 ? scratch_elements / (k * l) : p.batch;
  chunk = chunk < 1 ? 1 : (chunk > p.batch ? p.batch : chunk);
  return {cg, og, k, l, chunk};
}

// C_b = A_b · B_b (+ beta C_b) for `batch` products, strides given as (batch, row, col).
inline void batched_gemm(DType dtype, std::int64_t batch, std::int64_t m, std::int64_t n, std::int64_t k,
                         const void* a, std::int64_t a_b, std::int64_t a_r, std::int64_t a_c, const void* b,
                         std::int64_t b_b, std::int64_t b_r, std::int64_t b_c, void* c, std::int64_t c_b,
                         std::int64_t c_r, double beta, int device, cudaStream_t stream) {
  GemmPlan plan;
  plan.batch = batch;
  plan.m = m;
  plan.n = n;
  plan.k = k;
  plan.a = a;
  plan.batch_stride_a = a_b;
  plan.row_stride_a = a_r;
  plan.col_stride_a = a_c;
  plan.b = b;
  plan.batch_stride_b = b_b;
  plan.row_stride_b = b_r;
  plan.col_stride_b = b_c;
  plan.c = c;
  plan.batch_stride_c = c_b;
  plan.row_stride_c = c_r;
  plan.col_stride_c = 1;
  plan.beta = beta;
  plan.dtype = dtype;
  plan.device = device;
  dispatch_gemm_auto(plan, stream);
}

}  // namespace conv_detail

template <class T>
void conv2d_forward_typed(const Conv2dPlan& p, cudaStream_t stream, ScratchAllocator* scratch) {
  const conv_detail::Sizes z = conv_detail::sizes_of(p);
  T* out = static_cast<T*>(p.output);
  const bool has_bias = p.bias != nullptr;
  if (has_bias) {
    auto fill = &fill_bias_kernel<T>;
    EMBER_LAUNCH(fill, dim3(blocks_for(p.batch * p.out_channels * z.l, 256)), dim3(256), stream, p, out,
                 static_cast<const T*>(p.bias));
  }
  const std::size_t bytes = static_cast<std::size_t>(z.chunk * z.k * z.l) * sizeof(T);
  T* cols = static_cast<T*>(scratch->allocate(bytes));
  for (std::int64_t first = 0; first < p.batch; first += z.chunk) {
    const std::int64_t count = p.batch - first < z.chunk ? p.batch - first : z.chunk;
    for (std::int64_t g = 0; g < p.groups; ++g) {
      auto im2col = &im2col_kernel<T>;
      EMBER_LAUNCH(im2col, dim3(blocks_for(count * z.k * z.l, 256)), dim3(256), stream, p,
                   static_cast<const T*>(p.input), cols, first, count, g);
      conv_detail::batched_gemm(p.dtype, count, z.og, z.l, z.k, static_cast<const T*>(p.weight) + g * z.og * z.k, 0,
                                z.k, 1, cols, z.k * z.l, z.l, 1, out + (first * p.out_channels + g * z.og) * z.l,
                                p.out_channels * z.l, z.l, has_bias ? 1.0 : 0.0, p.device, stream);
    }
  }
  scratch->release(cols, bytes);
}

template <class T>
void conv2d_backward_input_typed(const Conv2dPlan& p, cudaStream_t stream, ScratchAllocator* scratch) {
  const conv_detail::Sizes z = conv_detail::sizes_of(p);
  const std::size_t bytes = static_cast<std::size_t>(z.chunk * z.k * z.l) * sizeof(T);
  T* cols = static_cast<T*>(scratch->allocate(bytes));
  const T* grad_out = static_cast<const T*>(p.output);
  for (std::int64_t first = 0; first < p.batch; first += z.chunk) {
    const std::int64_t count = p.batch - first < z.chunk ? p.batch - first : z.chunk;
    for (std::int64_t g = 0; g < p.groups; ++g) {
      // d cols[s] = W_gᵀ · d out[s]: Wᵀ through swapped strides.
      conv_detail::batched_gemm(p.dtype, count, z.k, z.l, z.og, static_cast<const T*>(p.weight) + g * z.og * z.k, 0,
                                1, z.k, grad_out + (first * p.out_channels + g * z.og) * z.l, p.out_channels * z.l,
                                z.l, 1, cols, z.k * z.l, z.l, 0.0, p.device, stream);
      auto col2im = &col2im_kernel<T>;
      EMBER_LAUNCH(col2im, dim3(blocks_for(count * z.cg * p.in_h * p.in_w, 256)), dim3(256), stream, p, cols,
                   static_cast<T*>(p.input), first, count, g);
    }
  }
  scratch->release(cols, bytes);
}

// Sums `count` consecutive [size] slices of `parts` into `out` (the reduction kernel over
// [1, count, size]: its fixed order keeps the result deterministic).
template <class T>
void sum_slices(const T* parts, std::int64_t count, std::int64_t size, T* out, int device, cudaStream_t stream,
                ScratchAllocator* scratch) {
  ReducePlan sum;
  sum.outer = 1;
  sum.reduce = count;
  sum.inner = size;
  sum.input = parts;
  sum.output = out;
  sum.input_dtype = sum.output_dtype = dtype_of_v<T>;
  sum.device = device;
  dispatch_reduce(ReduceOp::Sum, sum, stream, scratch);
}

template <class T>
void conv2d_backward_weight_typed(const Conv2dPlan& p, cudaStream_t stream, ScratchAllocator* scratch,
                                  std::int64_t scratch_elements) {
  const conv_detail::Sizes z = conv_detail::sizes_of(p, scratch_elements);
  // Samples per chunk: the chunk's columns and its per-sample partials both within the cap.
  std::int64_t chunk = z.og * z.k > 0 ? scratch_elements / (z.og * z.k) : z.chunk;
  chunk = chunk < 1 ? 1 : (chunk > z.chunk ? z.chunk : chunk);
  const std::int64_t chunks = (p.batch + chunk - 1) / chunk;
  const std::size_t cols_bytes = static_cast<std::size_t>(chunk * z.k * z.l) * sizeof(T);
  const std::size_t parts_bytes = static_cast<std::size_t>(chunk * z.og * z.k) * sizeof(T);
  const std::size_t sums_bytes = static_cast<std::size_t>(chunks * z.og * z.k) * sizeof(T);
  T* cols = static_cast<T*>(scratch->allocate(cols_bytes));
  T* parts = static_cast<T*>(scratch->allocate(parts_bytes));
  T* chunk_sums = chunks > 1 ? static_cast<T*>(scratch->allocate(sums_bytes)) : nullptr;
  const T* grad_out = static_cast<const T*>(p.output);
  T* grad_weight = static_cast<T*>(p.weight);
  for (std::int64_t g = 0; g < p.groups; ++g) {
    T* w_grad_g = grad_weight + g * z.og * z.k;
    for (std::int64_t c = 0; c < chunks; ++c) {
      const std::int64_t first = c * chunk, count = p.batch - first < chunk ? p.batch - first : chunk;
      auto im2col = &im2col_kernel<T>;
      EMBER_LAUNCH(im2col, dim3(blocks_for(count * z.k * z.l, 256)), dim3(256), stream, p,
                   static_cast<const T*>(p.input), cols, first, count, g);
      // parts[s] = d out[first + s] · cols[s]ᵀ: colsᵀ through swapped strides.
      conv_detail::batched_gemm(p.dtype, count, z.og, z.k, z.l, grad_out + (first * p.out_channels + g * z.og) * z.l,
                                p.out_channels * z.l, z.l, 1, cols, z.k * z.l, 1, z.l, parts, z.og * z.k, z.k, 0.0,
                                p.device, stream);
      sum_slices(parts, count, z.og * z.k, chunks > 1 ? chunk_sums + c * z.og * z.k : w_grad_g, p.device, stream,
                 scratch);
    }
    if (chunks > 1) sum_slices(chunk_sums, chunks, z.og * z.k, w_grad_g, p.device, stream, scratch);
  }
  if (chunk_sums != nullptr) scratch->release(chunk_sums, sums_bytes);
  scratch->release(parts, parts_bytes);
  scratch->release(cols, cols_bytes);
}

// The three entry points (the plan's roles: core/conv_plans.h). batch >= 1 and every size
// > 0 (native::conv2d returns early for empty results).
inline void dispatch_conv2d(const Conv2dPlan& plan, cudaStream_t stream, ScratchAllocator* scratch) {
  EMBER_DISPATCH_FLOATING(plan.dtype, conv2d_forward_typed<scalar_t>(plan, stream, scratch));
}
inline void dispatch_conv2d_backward_input(const Conv2dPlan& plan, cudaStream_t stream, ScratchAllocator* scratch) {
  EMBER_DISPATCH_FLOATING(plan.dtype, conv2d_backward_input_typed<scalar_t>(plan, stream, scratch));
}
// scratch_elements: the cap on each scratch buffer (tests lower it to make several chunks).
inline void dispatch_conv2d_backward_weight(const Conv2dPlan& plan, cudaStream_t stream, ScratchAllocator* scratch,
                                            std::int64_t scratch_elements = kConvScratchElements) {
  EMBER_DISPATCH_FLOATING(plan.dtype, conv2d_backward_weight_typed<scalar_t>(plan, stream, scratch, scratch_elements));
}

EMBER_KERNELS_END
