// core/cpu/conv_kernels.cpp — the CPU convolution: im2col, then ember's own GEMM.
//
// Issue 19 (Conv2d). A convolution of one sample and one group is one matrix product once
// the input patches are laid out as columns (im2col):
//
//   cols[K = C_g * kH * kW, L = oH * oW]     cols[(c, i, j), (y, x)] = in[c, y*sH - pH + i*dH, x*sW - pW + j*dW]
//   out[O_g, L] = W_g[O_g, K] · cols[K, L] (+ bias[o] on every column)
//
// and the two gradients are the same product transposed:
//   d cols = W_gᵀ · d out, folded back onto the input by col2im (the adjoint of im2col: each
//   column entry is *added* to the input pixel it was read from);
//   d W_g  = Σ_n d out_n · cols_nᵀ.
// The products run on core/cpu/gemm.cpp (cpu::gemm) with strided operands, so Wᵀ and colsᵀ
// are never copied. A 1x1 convolution with stride 1 and no padding needs no im2col at all:
// the input plane *is* cols.
//
// Threads (core/parallel.h): the forward and the input gradient split the batch among the
// threads, each with its own cols buffer (and its own input rows to fold into, so col2im
// needs no atomics); a batch of one instead lets the GEMM use the threads. The weight
// gradient splits the batch into fixed blocks of kWeightGradBlock samples, each summed in
// order into a partial result of its own (one GEMM per sample, beta = 1), and adds the
// partials in block order: the same sum for any thread count.
//
// The bound: im2col copies the input kH*kW times (K*L elements per sample and group), so
// small-channel layers (the first layer of a CNN: C_in = 1) are bound by that copy and by
// a GEMM whose K is only 9; larger layers are GEMM-bound. Memory: one K x L buffer per thread.
// im2col and col2im themselves are in core/cpu/im2col.cpp. bfloat16 (performance paths, the
// same products): for same-width rows the forward's and the weight gradient's im2col write the
// GEMM's packed panels directly, and a stride-1 input gradient runs as the forward convolution
// of d out with the weights flipped (conv2d_backward_input_as_convolution).
#include <algorithm>
#include <memory>
#include <new>
#include <type_traits>
#include <vector>

#include <ember/core/backend.h>
#include <ember/core/cpu/cpu_kernels.h>
#include <ember/core/cpu/gemm_kernels.h>
#include <ember/core/cpu/im2col.h>
#include <ember/core/dispatch.h>
#include <ember/core/error.h>
#include <ember/core/parallel.h>

namespace ember::cpu {

namespace {

// The shape of one sample and one group as the GEMMs see it.
struct GroupShape {
  std::int64_t in_channels;   // C_g
  std::int64_t out_channels;  // O_g
  std::int64_t k;             // C_g * kH * kW
  std::int64_t l;             // oH * oW
};

GroupShape group_shape(const Conv2dPlan& p) {
  const std::int64_t cg = p.in_channels / p.groups;
  return {cg, p.out_channels / p.groups, cg * p.kernel_h * p.kernel_w, p.out_h * p.out_w};
}

// The input plane is already cols: a 1x1 kernel, stride 1, no padding.
bool is_pointwise(const Conv2dPlan& p) {
  return p.kernel_h == 1 && p.kernel_w == 1 && p.stride_h == 1 && p.stride_w == 1 && p.pad_h == 0 && p.pad_w == 0;
}

// C[m, n] = A · B + beta * C, every operand given by its row and column strides. C is of the
// operands' type, or float32 for bfloat16 operands (Acc = float: the gradients' products,
// kept unrounded until their sums are complete; core/cpu/gemm_kernel_bf16_avx512.cpp).
template <class T, class Acc = T>
GemmPlan matmul_plan(std::int64_t m, std::int64_t n, std::int64_t k, const T* a, std::int64_t a_row,
                     std::int64_t a_col, const T* b, std::int64_t b_row, std::int64_t b_col, Acc* c, std::int64_t c_row,
                     double beta) {
  GemmPlan plan;
  plan.m = m;
  plan.n = n;
  plan.k = k;
  plan.a = a;
  plan.row_stride_a = a_row;
  plan.col_stride_a = a_col;
  plan.b = b;
  plan.row_stride_b = b_row;
  plan.col_stride_b = b_col;
  plan.c = c;
  plan.row_stride_c = c_row;
  plan.col_stride_c = 1;
  plan.beta = beta;
  plan.dtype = dtype_of_v<T>;
  plan.device = -1;
  return plan;
}

template <class T, class Acc = T>
void matmul(std::int64_t m, std::int64_t n, std::int64_t k, const T* a, std::int64_t a_row, std::int64_t a_col,
            const T* b, std::int64_t b_row, std::int64_t b_col, Acc* c, std::int64_t c_row, double beta) {
  const GemmPlan plan = matmul_plan<T, Acc>(m, n, k, a, a_row, a_col, b, b_row, b_col, c, c_row, beta);
  if constexpr (std::is_same_v<T, Acc>) gemm(plan);
  else gemm_bfloat16_to_float32_avx512(plan);
}

// This thread's packed-panel buffer for im2col_bfloat16_panels (64-byte aligned: the panels
// are read by AMX tile loads and zmm loads).
std::uint16_t* panels_buffer(std::int64_t size) {
  struct Aligned {
    void operator()(std::uint16_t* p) const { ::operator delete[](p, std::align_val_t{64}); }
  };
  thread_local std::unique_ptr<std::uint16_t[], Aligned> buffer;
  thread_local std::int64_t capacity = 0;
  if (capacity < size) {
    buffer.reset(static_cast<std::uint16_t*>(
        ::operator new[](static_cast<std::size_t>(size) * sizeof(std::uint16_t), std::align_val_t{64})));
    capacity = size;
  }
  return buffer.get();
}

// A second per-thread buffer (the input-gradient planes of a bfloat16 convolution, summed in
// float32), apart from cols_buffer's.
float* planes_buffer(std::int64_t size) {
  thread_local std::vector<float> buffer;
  if (buffer.size() < static_cast<std::size_t>(size)) buffer.resize(static_cast<std::size_t>(size));
  return buffer.data();
}

// This thread's cols buffer, at least `size` elements: kept between calls, grown when a
// larger layer needs it, never cleared (im2col writes every entry the GEMM reads). A fresh
// std::vector per call zero-filled the buffer and faulted new pages in on every call (the
// memset and page clearing of the CNN step's profile, docs/performance.md).
template <class T>
T* cols_buffer(std::int64_t size) {
  thread_local std::vector<T> buffer;
  if (buffer.size() < static_cast<std::size_t>(size)) buffer.resize(static_cast<std::size_t>(size));
  return buffer.data();
}

// Runs body(n, cols_buffer) for every sample: split among the threads for a batch of two or
// more (each chunk with its own buffer), on this thread for one (its GEMMs then use the pool).
template <class T, class Body>
void for_each_sample(const Conv2dPlan& p, std::int64_t buffer_size, const Body& body) {
  auto run = [&](std::int64_t begin, std::int64_t end) {
    T* cols = cols_buffer<T>(buffer_size);
    for (std::int64_t n = begin; n < end; ++n) body(n, cols);
  };
  if (p.batch < 2) run(0, p.batch);
  else parallel_for(0, p.batch, 1, run);
}

template <class T>
void conv2d_forward_typed(const Conv2dPlan& p) {
  const GroupShape g = group_shape(p);
  const bool pointwise = is_pointwise(p);
  const T* input = static_cast<const T*>(p.input);
  const T* weight = static_cast<const T*>(p.weight);
  const T* bias = static_cast<const T*>(p.bias);
  T* output = static_cast<T*>(p.output);
  const std::int64_t in_plane = p.in_h * p.in_w;
  // bfloat16 same-width rows: im2col writes the GEMM's packed panels (im2col_bfloat16_panels).
  const bool panels = std::is_same_v<T, BFloat16> && !pointwise && same_width_rows(p);
  const BFloat16PanelLayout layout = panels ? bfloat16_panel_layout(g.k, g.l) : BFloat16PanelLayout{};
  const BFloat16ColsRows cols_rows =
      panels ? bfloat16_cols_rows(p, g.in_channels, 2 * layout.pairs, layout.panels) : BFloat16ColsRows{};
  // Each group's weights, the A of every sample's product, packed once for all samples (on
  // vdpbf16ps; the AMX tiles read most of A's rows as they are).
  const auto weight_plan = [&](std::int64_t group, T* out_g) {
    return matmul_plan<T>(g.out_channels, g.l, g.k, weight + group * g.out_channels * g.k, g.k, 1, nullptr, 0, 0,
                          out_g, g.l, bias != nullptr ? 1.0 : 0.0);
  };
  const bool pack_weights_once = panels && !layout.amx && p.batch > 1;
  const std::int64_t packed_weight_halves = pack_weights_once ? bfloat16_packed_a_halves(g.out_channels, g.k) : 0;
  std::vector<std::uint16_t> packed_weights(static_cast<std::size_t>(packed_weight_halves * p.groups));
  for (std::int64_t group = 0; group < (pack_weights_once ? p.groups : 0); ++group)
    pack_bfloat16_a(weight_plan(group, nullptr), packed_weights.data() + group * packed_weight_halves);
  for_each_sample<T>(p, pointwise || panels ? 0 : g.k * g.l, [&](std::int64_t n, T* cols) {
    T* out_n = output + n * p.out_channels * g.l;
    if (bias != nullptr) {
      for (std::int64_t o = 0; o < p.out_channels; ++o) fill_row(out_n + o * g.l, g.l, bias[o]);
    }
    for (std::int64_t group = 0; group < p.groups; ++group) {
      const T* in_g = input + (n * p.in_channels + group * g.in_channels) * in_plane;
      if constexpr (std::is_same_v<T, BFloat16>) {
        if (panels) {
          std::uint16_t* packed = panels_buffer(layout.panels * layout.panel_halves);
          im2col_bfloat16_panels(in_g, cols_rows, layout, packed);
          gemm_bfloat16_packed_b_avx512(weight_plan(group, out_n + group * g.out_channels * g.l), layout, packed, false,
                                        pack_weights_once ? packed_weights.data() + group * packed_weight_halves : nullptr);
          continue;
        }
      }
      const T* b = in_g;
      if (!pointwise) {
        im2col(p, in_g, g.in_channels, cols);
        b = cols;
      }
      matmul<T>(g.out_channels, g.l, g.k, weight + group * g.out_channels * g.k, g.k, 1, b, g.l, 1,
                out_n + group * g.out_channels * g.l, g.l, bias != nullptr ? 1.0 : 0.0);
    }
  });
}

// Acc = T, or float for bfloat16: then d cols and the input planes are summed in float32 and
// rounded into the bfloat16 gradient once, as the widened float32 path rounds.
template <class T, class Acc = T>
void conv2d_backward_input_typed(const Conv2dPlan& p) {
  const GroupShape g = group_shape(p);
  const bool pointwise = is_pointwise(p);
  const T* grad_out = static_cast<const T*>(p.output);
  const T* weight = static_cast<const T*>(p.weight);
  T* grad_in = static_cast<T*>(p.input);
  const std::int64_t in_plane = p.in_h * p.in_w;
  // W_gᵀ read through swapped strides (row stride 1, column stride K) makes the bfloat16
  // GEMM's AMX path transpose it while packing, again for every sample; for bfloat16, Wᵀ is
  // transposed once per call into row-major [K, O_g] blocks instead, which its pack copies.
  std::vector<T> weight_t;
  std::int64_t wt_row = 1, wt_col = g.k;  // strides of W_gᵀ's element (k, o)
  if constexpr (!std::is_same_v<T, Acc>) {
    weight_t.resize(static_cast<std::size_t>(p.out_channels * g.k));
    for (std::int64_t group = 0; group < p.groups; ++group) {
      const T* w_g = weight + group * g.out_channels * g.k;
      T* wt_g = weight_t.data() + group * g.out_channels * g.k;
      for (std::int64_t o = 0; o < g.out_channels; ++o)
        for (std::int64_t k = 0; k < g.k; ++k) wt_g[k * g.out_channels + o] = w_g[o * g.k + k];
    }
    weight = weight_t.data();
    wt_row = g.out_channels;
    wt_col = 1;
  }
  for_each_sample<Acc>(p, pointwise ? 0 : g.k * g.l, [&](std::int64_t n, Acc* cols) {
    for (std::int64_t group = 0; group < p.groups; ++group) {
      T* in_g = grad_in + (n * p.in_channels + group * g.in_channels) * in_plane;
      Acc* sums = nullptr;  // where this group's input gradient is summed
      if constexpr (std::is_same_v<T, Acc>) sums = in_g;
      else sums = planes_buffer(g.in_channels * in_plane);
      const T* wt_g = weight + group * g.out_channels * g.k;
      const T* out_g = grad_out + (n * p.out_channels + group * g.out_channels) * g.l;
      // d cols[K, L] = W_gᵀ · d out_g.
      if (pointwise) {
        matmul<T, Acc>(g.k, g.l, g.out_channels, wt_g, wt_row, wt_col, out_g, g.l, 1, sums, g.l, 0.0);
      } else {
        matmul<T, Acc>(g.k, g.l, g.out_channels, wt_g, wt_row, wt_col, out_g, g.l, 1, cols, g.l, 0.0);
        std::fill(sums, sums + g.in_channels * in_plane, Acc(0));
        col2im(p, cols, g.in_channels, sums);
      }
      if constexpr (!std::is_same_v<T, Acc>) std::copy(sums, sums + g.in_channels * in_plane, in_g);  // rounds once
    }
  });
}

// The input gradient of a stride-1 convolution is itself a convolution: of d out, with the
// weights' two channel dims swapped and each kernel flipped, padded by dH * (kH - 1) - pH:
//   d in[c, h, w] = Σ_{o, i, j} d out[o, h + pH - i*dH, w + pW - j*dW] · W[o, c, i, j]
//                 = conv2d(d out, W')[c, h, w]   with W'[c, o, i', j'] = W[o, c, kH-1-i', kW-1-j'].
// For bfloat16 same-width rows this runs the forward's path (im2col straight into the GEMM's
// packed panels, K' = O_g * kH * kW, one rounding from the float32 sums), where the product
// d cols = Wᵀ · d out would write float32 cols (K * L per sample) for col2im to read back.
// Its product has C_g rows: from 32 (a whole AMX block of rows), where fewer would multiply
// mostly padding (a first layer's C_g = 1: 32 times the tile work of d cols = Wᵀ · d out).
bool input_gradient_as_convolution(const Conv2dPlan& p) {
  return p.dtype == DType::BFloat16 && same_width_rows(p) && p.stride_h == 1 && !is_pointwise(p) &&
         p.in_channels / p.groups >= 32 && p.pad_h <= p.dilation_h * (p.kernel_h - 1) &&
         p.pad_w <= p.dilation_w * (p.kernel_w - 1);
}

void conv2d_backward_input_as_convolution(const Conv2dPlan& p) {
  const GroupShape g = group_shape(p);
  const auto* weight = static_cast<const BFloat16*>(p.weight);
  const std::int64_t taps = p.kernel_h * p.kernel_w;
  std::vector<BFloat16> flipped(static_cast<std::size_t>(p.out_channels * g.k));  // W' [C_in, O_g, kH, kW]
  for (std::int64_t group = 0; group < p.groups; ++group)
    for (std::int64_t c = 0; c < g.in_channels; ++c)
      for (std::int64_t o = 0; o < g.out_channels; ++o) {
        const BFloat16* from = weight + ((group * g.out_channels + o) * g.in_channels + c) * taps;
        BFloat16* to = flipped.data() + ((group * g.in_channels + c) * g.out_channels + o) * taps;
        std::reverse_copy(from, from + taps, to);  // (i, j) -> (kH-1-i, kW-1-j): the taps in reverse
      }
  Conv2dPlan transposed = p;
  transposed.in_channels = p.out_channels;
  transposed.out_channels = p.in_channels;
  transposed.in_h = p.out_h;
  transposed.in_w = p.out_w;
  transposed.out_h = p.in_h;
  transposed.out_w = p.in_w;
  transposed.pad_h = p.dilation_h * (p.kernel_h - 1) - p.pad_h;
  transposed.pad_w = p.dilation_w * (p.kernel_w - 1) - p.pad_w;
  transposed.input = p.output;  // d out
  transposed.weight = flipped.data();
  transposed.bias = nullptr;
  transposed.output = p.input;  // d in
  conv2d_forward_typed<BFloat16>(transposed);
}

// Samples per block of the weight gradient: each block sums its samples into a partial
// result of its own, and the partials are added in block order, so the result does not
// depend on the thread count.
constexpr std::int64_t kWeightGradBlock = 8;

// Acc = T, or float for bfloat16: then every partial sum is float32 and the gradient is
// rounded once at the end.
template <class T, class Acc = T>
void conv2d_backward_weight_typed(const Conv2dPlan& p) {
  const GroupShape g = group_shape(p);
  const bool pointwise = is_pointwise(p);
  const T* input = static_cast<const T*>(p.input);
  const T* grad_out = static_cast<const T*>(p.output);
  T* grad_weight = static_cast<T*>(p.weight);
  const std::int64_t in_plane = p.in_h * p.in_w, weight_size = p.out_channels * g.k;
  if (p.batch == 0) {
    std::fill(grad_weight, grad_weight + weight_size, T(0));
    return;
  }
  // bfloat16 same-width rows: im2col writes colsᵀ straight into the GEMM's packed B panels
  // (im2col_bfloat16_transposed_panels), where the GEMM would transpose a cols buffer.
  const bool panels = std::is_same_v<T, BFloat16> && !pointwise && same_width_rows(p);
  const BFloat16PanelLayout layout = panels ? bfloat16_panel_layout(g.l, g.k) : BFloat16PanelLayout{};
  const BFloat16ColsRows cols_rows =
      panels ? bfloat16_cols_rows(p, g.in_channels, 32 * layout.panels, (g.l + 31) / 32) : BFloat16ColsRows{};
  // Samples [begin, end) summed into `result` (overwritten).
  auto sum_samples = [&](std::int64_t begin, std::int64_t end, Acc* result) {
    T* cols = cols_buffer<T>(pointwise || panels ? 0 : g.k * g.l);
    for (std::int64_t n = begin; n < end; ++n) {
      for (std::int64_t group = 0; group < p.groups; ++group) {
        const T* in_g = input + (n * p.in_channels + group * g.in_channels) * in_plane;
        if constexpr (!std::is_same_v<T, Acc>) {
          if (panels) {
            std::uint16_t* packed = panels_buffer(layout.panels * layout.panel_halves);
            im2col_bfloat16_transposed_panels(in_g, cols_rows, layout, packed);
            const GemmPlan plan = matmul_plan<T, Acc>(
                g.out_channels, g.k, g.l, grad_out + (n * p.out_channels + group * g.out_channels) * g.l, g.l, 1,
                nullptr, 0, 0, result + group * g.out_channels * g.k, g.k, n == begin ? 0.0 : 1.0);
            gemm_bfloat16_packed_b_avx512(plan, layout, packed, /*float32_c=*/true);
            continue;
          }
        }
        const T* b = in_g;
        if (!pointwise) {
          im2col(p, in_g, g.in_channels, cols);
          b = cols;
        }
        // d W_g[O_g, K] (+)= d out_g[O_g, L] · colsᵀ[L, K]
        matmul<T, Acc>(g.out_channels, g.k, g.l, grad_out + (n * p.out_channels + group * g.out_channels) * g.l, g.l, 1,
                       b, 1, g.l, result + group * g.out_channels * g.k, g.k, n == begin ? 0.0 : 1.0);
      }
    }
  };
  const std::int64_t blocks = (p.batch + kWeightGradBlock - 1) / kWeightGradBlock;
  if (blocks == 1) {  // one block: its GEMMs use the threads
    if constexpr (std::is_same_v<T, Acc>) {
      sum_samples(0, p.batch, grad_weight);
    } else {
      std::vector<Acc> sums(static_cast<std::size_t>(weight_size));
      sum_samples(0, p.batch, sums.data());
      std::copy(sums.begin(), sums.end(), grad_weight);  // rounds once
    }
    return;
  }
  std::vector<Acc> partials(static_cast<std::size_t>(blocks * weight_size));
  parallel_for(0, blocks, 1, [&](std::int64_t first, std::int64_t last) {
    for (std::int64_t b = first; b < last; ++b)
      sum_samples(b * kWeightGradBlock, std::min(p.batch, (b + 1) * kWeightGradBlock), partials.data() + b * weight_size);
  });
  for (std::int64_t e = 0; e < weight_size; ++e) {
    Acc sum = partials[static_cast<std::size_t>(e)];
    for (std::int64_t b = 1; b < blocks; ++b) sum += partials[static_cast<std::size_t>(b * weight_size + e)];
    grad_weight[e] = static_cast<T>(sum);
  }
}

}  // namespace

void conv2d(const Conv2dPlan& p) {
  if (p.dtype == DType::Float64) conv2d_forward_typed<double>(p);
  else if (p.dtype == DType::BFloat16) conv2d_forward_typed<BFloat16>(p);  // core/conv.cpp: only when the GEMM reads it
  else conv2d_forward_typed<float>(p);
}

void conv2d_backward_input(const Conv2dPlan& p) {
  if (p.dtype == DType::Float64) conv2d_backward_input_typed<double>(p);
  else if (input_gradient_as_convolution(p)) conv2d_backward_input_as_convolution(p);
  else if (p.dtype == DType::BFloat16) conv2d_backward_input_typed<BFloat16, float>(p);
  else conv2d_backward_input_typed<float>(p);
}

void conv2d_backward_weight(const Conv2dPlan& p) {
  if (p.dtype == DType::Float64) conv2d_backward_weight_typed<double>(p);
  else if (p.dtype == DType::BFloat16) conv2d_backward_weight_typed<BFloat16, float>(p);
  else conv2d_backward_weight_typed<float>(p);
}

EMBER_REGISTER_KERNEL(::ember::conv2d_kernel, CPU, conv2d);
EMBER_REGISTER_KERNEL(::ember::conv2d_backward_input_kernel, CPU, conv2d_backward_input);
EMBER_REGISTER_KERNEL(::ember::conv2d_backward_weight_kernel, CPU, conv2d_backward_weight);

}  // namespace ember::cpu
