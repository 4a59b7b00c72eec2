// core/cpu/layer_norm_kernels.cpp — the CPU's fused layer-norm kernels (core/layer_norm_plan.h):
// the forward (a row's mean and rstd, then its normalised output) and the backward (a row's
// two sums, then its input gradient; the parameters' gradients as column sums), each one call.
//
// Issue 21. The composite version (mean, sub, pow, mean, add, rsqrt, mul, mul, add) reads
// the input six times and writes five temporaries; here each row is read three times (its
// sum, its squared deviations, the normalisation) while it sits in L1/L2, and written once.
//
// Arithmetic. PyTorch's CPU kernel (aten/src/ATen/native/cpu/layer_norm_kernel.cpp) gets a
// row's mean and variance from a vectorised Welford pass ("RowwiseMoments") accumulated in
// float for float inputs (its opmath type) and in double for double inputs; rstd =
// 1 / sqrt(var + eps) in that type too. We follow the precision, not the algorithm:
// accumulation in T (float stays float), but two passes — Σx, then Σ(x - mean)² — each in
// kLanes interleaved partial sums folded pairwise at the end (independent sums, so the
// compiler keeps them in vector registers: two SSE registers of float in the baseline build). Two-pass is at least as accurate as Welford (the deviations are
// formed after the mean is known, so a row with a large mean loses nothing more than the
// mean's own rounding) and the two agree to a few ulps; tests/nn/test_layer_norm.cpp holds
// them to PyTorch within 1e-5 relative. y = (x - mean) · rstd · weight + bias in PyTorch's
// order (weight 1, bias 0 when absent).
//
// The backward computes dx = rstd · (g - Σg/N - x̂ · Σ(g·x̂)/N), g = dy · weight,
// x̂ = (x - mean) · rstd. PyTorch expands the same formula to rstd·g + b·x + c with b and c
// per row, which cancels catastrophically when |mean| ≫ std; this form does not. The
// parameters' gradients are column sums over the rows (grad_weight[j] = Σ_i dy·x̂,
// grad_bias[j] = Σ_i dy), accumulated in T in the same pass over the rows as the input
// gradient (each row is read once, while in cache): every fixed block of rows sums its rows
// in order into partials of its own, and the partials are added in block order, so every
// result is the same whatever the thread count (the blocks depend on the shape only).
//
// Threads: the rows are split across threads (parallel_for, core/parallel.h), about
// kDefaultGrainSize elements per chunk. The reference loops (core/reference/layer_norm_loops.cpp)
// state the same definitions plainly, with double sums.
#include <algorithm>
#include <cmath>
#include <vector>

#include <ember/core/backend.h>
#include <ember/core/cpu/cpu_kernels.h>
#include <ember/core/dispatch.h>
#include <ember/core/error.h>
#include <ember/core/parallel.h>

namespace ember::cpu {

namespace {

constexpr int kLanes = 8;  // two SSE registers of float, one AVX2 register

// kLanes running sums of one quantity; add(j, v) feeds element j's term into lane j % kLanes.
template <class T>
struct LaneSums {
  T lane[kLanes] = {};
  T fold() {
    for (int width = kLanes / 2; width > 0; width /= 2)
      for (int l = 0; l < width; ++l) lane[l] += lane[l + width];
    return lane[0];
  }
};

// Rows per thread chunk: about kDefaultGrainSize elements of work per chunk.
std::int64_t row_grain(std::int64_t row_size) {
  return std::max<std::int64_t>(1, kDefaultGrainSize / std::max<std::int64_t>(row_size, 1));
}

// One row's mean and rstd (two passes, lane sums in T).
template <class T>
void row_moments(const T* x, std::int64_t n, T eps, T& mean, T& rstd) {
  LaneSums<T> sum;
  std::int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int l = 0; l < kLanes; ++l) sum.lane[l] += x[j + l];
  for (; j < n; ++j) sum.lane[j % kLanes] += x[j];
  const T m = sum.fold() / static_cast<T>(n);
  LaneSums<T> squares;
  j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      const T deviation = x[j + l] - m;
      squares.lane[l] += deviation * deviation;
    }
  for (; j < n; ++j) {
    const T deviation = x[j] - m;
    squares.lane[j % kLanes] += deviation * deviation;
  }
  const T variance = squares.fold() / static_cast<T>(n);
  mean = m;
  rstd = T(1) / std::sqrt(variance + eps);
}

template <class T>
void layer_norm_typed(const LayerNormPlan& plan) {
  const std::int64_t n = plan.row_size;
  const T* x = static_cast<const T*>(plan.input);
  T* y = static_cast<T*>(plan.output);
  const T* weight = static_cast<const T*>(plan.weight);
  const T* bias = static_cast<const T*>(plan.bias);
  T* mean = static_cast<T*>(plan.mean);
  T* rstd = static_cast<T*>(plan.rstd);
  const T eps = static_cast<T>(plan.eps);
  parallel_for(0, plan.rows, row_grain(n), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      const T* in = x + i * n;
      T* out = y + i * n;
      T m, r;
      row_moments(in, n, eps, m, r);
      mean[i] = m;
      rstd[i] = r;
      if (weight != nullptr && bias != nullptr) {
        for (std::int64_t j = 0; j < n; ++j) out[j] = (in[j] - m) * r * weight[j] + bias[j];
      } else {
        for (std::int64_t j = 0; j < n; ++j)
          out[j] = (in[j] - m) * r * (weight != nullptr ? weight[j] : T(1)) + (bias != nullptr ? bias[j] : T(0));
      }
    }
  });
}

// The backward in one pass over the rows: for each row, Σg and Σg·x̂ in lane sums, then dx;
// and, while the row is in cache, its terms of the parameters' gradients (dy·x̂ and dy)
// added into its row block's partial sums. The blocks are a fixed partition of the rows
// (row_blocks: it depends on the shape only), each summed in row order; the partials are
// then added in block order, so the result does not depend on the thread count.
struct RowBlocks {
  std::int64_t rows_per_block, count;
};
RowBlocks row_blocks(std::int64_t rows, std::int64_t row_size) {
  constexpr std::int64_t kMaxBlocks = 64;  // bounds the partials' memory and their final sum
  const std::int64_t per_block = std::max(row_grain(row_size), (rows + kMaxBlocks - 1) / kMaxBlocks);
  return {per_block, (rows + per_block - 1) / per_block};
}

template <class T>
void layer_norm_backward_typed(const LayerNormBackwardPlan& plan) {
  const std::int64_t n = plan.row_size, rows = plan.rows;
  const T* x = static_cast<const T*>(plan.input);
  const T* dy = static_cast<const T*>(plan.grad_output);
  const T* weight = static_cast<const T*>(plan.weight);
  const T* mean = static_cast<const T*>(plan.mean);
  const T* rstd = static_cast<const T*>(plan.rstd);
  T* dx = static_cast<T*>(plan.grad_input);
  T* grad_weight = static_cast<T*>(plan.grad_weight);
  T* grad_bias = static_cast<T*>(plan.grad_bias);
  auto g_of = [weight](const T* g, std::int64_t j) { return weight != nullptr ? g[j] * weight[j] : g[j]; };
  const RowBlocks blocks = row_blocks(rows, n);
  // Per block: n partial sums of dy·x̂ (grad_weight), then n of dy (grad_bias).
  std::vector<T> partials(static_cast<std::size_t>(blocks.count * 2 * n));
  parallel_for(0, blocks.count, 1, [&](std::int64_t first, std::int64_t last) {
    for (std::int64_t block = first; block < last; ++block) {
      T* weight_sum = partials.data() + block * 2 * n;
      T* bias_sum = weight_sum + n;
      const std::int64_t end = std::min(rows, (block + 1) * blocks.rows_per_block);
      for (std::int64_t i = block * blocks.rows_per_block; i < end; ++i) {
        const T* in = x + i * n;
        const T* g = dy + i * n;
        const T m = mean[i], r = rstd[i];
        if (dx != nullptr) {
          LaneSums<T> sum_g, sum_gx;
          std::int64_t j = 0;
          for (; j + kLanes <= n; j += kLanes)
            for (int l = 0; l < kLanes; ++l) {
              const T gj = g_of(g, j + l);
              sum_g.lane[l] += gj;
              sum_gx.lane[l] += gj * ((in[j + l] - m) * r);
            }
          for (; j < n; ++j) {
            const T gj = g_of(g, j);
            sum_g.lane[j % kLanes] += gj;
            sum_gx.lane[j % kLanes] += gj * ((in[j] - m) * r);
          }
          const T mean_g = sum_g.fold() / static_cast<T>(n);
          const T mean_gx = sum_gx.fold() / static_cast<T>(n);
          T* out = dx + i * n;
          for (j = 0; j < n; ++j) out[j] = (g_of(g, j) - mean_g - (in[j] - m) * r * mean_gx) * r;
        }
        // The block's first row sets its partial sums, the others add to them.
        const bool first_row = i == block * blocks.rows_per_block;
        if (grad_weight != nullptr)
          for (std::int64_t j = 0; j < n; ++j) {
            const T term = g[j] * ((in[j] - m) * r);
            weight_sum[j] = first_row ? term : weight_sum[j] + term;
          }
        if (grad_bias != nullptr)
          for (std::int64_t j = 0; j < n; ++j) bias_sum[j] = first_row ? g[j] : bias_sum[j] + g[j];
      }
    }
  });
  if (grad_weight == nullptr && grad_bias == nullptr) return;
  // The blocks' partials, added in block order (threads over the columns).
  parallel_for(0, n, std::max<std::int64_t>(64, kDefaultGrainSize / std::max<std::int64_t>(blocks.count, 1)),
               [&](std::int64_t begin, std::int64_t end) {
                 for (std::int64_t j = begin; j < end; ++j) {
                   T weight_total = T(0), bias_total = T(0);
                   for (std::int64_t block = 0; block < blocks.count; ++block) {
                     const T* weight_sum = partials.data() + block * 2 * n;
                     weight_total = block == 0 ? weight_sum[j] : weight_total + weight_sum[j];
                     bias_total = block == 0 ? weight_sum[n + j] : bias_total + weight_sum[n + j];
                   }
                   if (grad_weight != nullptr) grad_weight[j] = weight_total;  // 0 for no rows
                   if (grad_bias != nullptr) grad_bias[j] = bias_total;
                 }
               });
}

}  // namespace

void layer_norm(const LayerNormPlan& plan) { EMBER_DISPATCH_FLOATING(plan.dtype, layer_norm_typed<scalar_t>(plan)); }

void layer_norm_backward(const LayerNormBackwardPlan& plan) {
  EMBER_DISPATCH_FLOATING(plan.dtype, layer_norm_backward_typed<scalar_t>(plan));
}

EMBER_REGISTER_KERNEL(::ember::layer_norm_kernel, CPU, layer_norm);
EMBER_REGISTER_KERNEL(::ember::layer_norm_backward_kernel, CPU, layer_norm_backward);

}  // namespace ember::cpu
