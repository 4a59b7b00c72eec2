// core/cpu/flash_attention_kernels.cpp — the CPU's fused attention (FlashAttention): forward
// and backward in tiles, with an online softmax, never holding the L×S scores
// (core/flash_attention_plan.h has the definitions). Performance code: the plain version is
// core/reference/flash_attention_loops.cpp.
//
// Issue 21. The composite F::scaled_dot_product_attention writes the L×S scores, reads them
// back for the softmax, writes the weights, reads them for the second product — and keeps
// both for the backward: 2·L·S values per head, 128 MiB at L = S = 4096 in float32. Here a
// block of kQueryTile queries meets the keys kKeyTile at a time:
//
//   forward, one task per (batch entry, query tile):      the tile's running state
//     for each key tile j (keys 0..the tile's last row, when causal):     m_i  max so far
//       s   = scale · Q_i K_jᵀ             (GEMM, kQueryTile × kKeyTile)  l_i  Σ exp(s - m_i)
//       m'  = max(m, rowmax s);  p = exp(s - m');  masked keys: p = 0     acc_i Σ p · v
//       acc = acc · exp(m - m') + p · V_j  (GEMM, beta = 1);  l = l · exp(m - m') + Σ p
//     out_i = acc_i / l_i,  lse_i = m_i + log l_i
//
//   backward, one task per batch entry (a head):
//     D_i = dO_i · O_i for every row, first
//     for each key tile j, each query tile i that sees it:
//       p   = exp(scale · Q_i K_jᵀ - lse_i)          (GEMM, then exp; the saved lse, no max)
//       dV_j += pᵀ dO_i                              (GEMM, beta = 1)
//       dS  = p ∘ (dO_i V_jᵀ - D_i)                  (GEMM, then the row loop)
//       dQ_i += scale · dS K_j,  dK_j += scale · dSᵀ Q_i     (GEMMs, beta = 1)
//     dK_j and dV_j sum over every query tile, so a head's tiles stay on one thread and no
//     two threads ever add to one gradient row (PyTorch's CPU kernel splits the same way).
//
// The tile products are core/cpu/gemm.cpp's GEMM (its SIMD micro-kernels), reading q, v, dO
// and the gradients in place through their strides. k (and v in the backward) is first
// transposed once per head into [E, S] — scratch the size of k, never of the scores — so that
// q·kᵀ reads plain rows; otherwise the GEMM would transpose each key tile again for every
// query tile that meets it. Everything between the products is per row, in the vector loops
// of core/cpu/flash_attention_rows.h (a polynomial exp: libm's, one call per score, would cost
// about as much as the products), built for AVX-512, AVX2 and the baseline and picked at run
// time as the GEMM's micro-kernel is. Accumulation is in the element type — float for
// float32, as PyTorch's CPU kernel accumulates — and each output element is summed in a fixed
// order whatever the thread count.
//
// Threads: the tasks (forward: batch entry × query tile, the heaviest causal tiles first;
// backward: batch entries) are claimed from an atomic counter by one worker per pool thread.
// A single task (one head in the backward, or one tile) runs on the caller instead, where
// its GEMMs may use the threads themselves.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include <ember/core/backend.h>
#include <ember/core/cpu/cpu_kernels.h>
#include <ember/core/cpu/gemm_kernels.h>
#include <ember/core/dispatch.h>
#include <ember/core/error.h>
#include <ember/core/parallel.h>

#define EMBER_FLASH_ROWS_NAMESPACE rows_portable
#include <ember/core/cpu/flash_attention_rows.h>

namespace ember::cpu {

namespace {

// Rows of queries per tile and keys per tile. A tile's scores (64 × 256 floats, 64 KiB), its
// accumulator and one key tile of kᵀ and v stay in L2 between the two products, and each key
// tile serves 64 queries per trip from memory.
constexpr std::int64_t kQueryTile = 64;
constexpr std::int64_t kKeyTile = 256;

// The row loops for this CPU: the instruction set the GEMM's micro-kernel uses (AVX-512 or
// AVX2 when cpuid says so, else the portable build; EMBER_GEMM_KERNEL=portable|avx2|avx512
// forces one, for tests and benchmarks: core/cpu/gemm_kernels.h). Asked once per call.
template <class T>
FlashRowOps<T> row_ops() {
  const VectorIsa isa = active_vector_isa();
  if constexpr (std::is_same_v<T, float>) {
    if (isa == VectorIsa::kAvx512) return flash_row_ops_avx512_f32();
    if (isa == VectorIsa::kAvx2) return flash_row_ops_avx2_f32();
  } else {
    if (isa == VectorIsa::kAvx512) return flash_row_ops_avx512_f64();
    if (isa == VectorIsa::kAvx2) return flash_row_ops_avx2_f64();
  }
  return rows_portable::row_ops<T>();
}

// Row r of batch entry `entry` of an operand (entry = o · inner + n).
template <class T>
T* row_of(T* data, const AttentionStrides& s, const AttentionShape& shape, std::int64_t entry, std::int64_t r) {
  return data + (entry / shape.inner) * s.outer + (entry % shape.inner) * s.inner + r * s.row;
}

// C (m × n, row stride ldc) = alpha · A·B + beta · C, with A(i, p) = a[i·a_rs + p·a_cs] and
// B(p, j) = b[p·b_rs + j·b_cs]: one tile product on the CPU GEMM.
template <class T>
void tile_gemm(std::int64_t m, std::int64_t n, std::int64_t k, const T* a, std::int64_t a_rs, std::int64_t a_cs,
               const T* b, std::int64_t b_rs, std::int64_t b_cs, T* c, std::int64_t ldc, double alpha, double beta) {
  GemmPlan plan;
  plan.m = m;
  plan.n = n;
  plan.k = k;
  plan.a = a;
  plan.row_stride_a = a_rs;
  plan.col_stride_a = a_cs;
  plan.b = b;
  plan.row_stride_b = b_rs;
  plan.col_stride_b = b_cs;
  plan.c = c;
  plan.row_stride_c = ldc;
  plan.col_stride_c = 1;
  plan.alpha = alpha;
  plan.beta = beta;
  plan.dtype = dtype_of<T>::value;
  gemm(plan);
}

// out[e · cols + j] = rows[j · row_stride + e] for j < cols, e < width: one entry's k (or v)
// transposed into [width, cols], so that the score products q·kᵀ (and dO·vᵀ) read their
// right-hand side as plain rows and the GEMM need not transpose a key tile for every query
// tile that meets it. Blocks of 16 rows keep both sides' cache lines in use.
template <class T>
void transpose_rows(const T* rows, std::int64_t row_stride, std::int64_t cols, std::int64_t width, T* out) {
  constexpr std::int64_t kBlock = 16;
  for (std::int64_t j0 = 0; j0 < cols; j0 += kBlock) {
    const std::int64_t j1 = std::min(cols, j0 + kBlock);
    for (std::int64_t e = 0; e < width; ++e)
      for (std::int64_t j = j0; j < j1; ++j) out[e * cols + j] = rows[j * row_stride + e];
  }
}

// Runs task(t) for every t in [0, tasks): one worker per pool thread claiming tasks
// from a shared counter, or the caller alone for a single task.
template <class Task>
void run_tasks(std::int64_t tasks, const Task& task) {
  if (tasks <= 0) return;
  if (tasks == 1 || get_num_threads() == 1) {
    for (std::int64_t t = 0; t < tasks; ++t) task(t);
    return;
  }
  std::atomic<std::int64_t> next{0};
  const std::int64_t workers = std::min<std::int64_t>(get_num_threads(), tasks);
  parallel_for(0, workers, 1, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t w = begin; w < end; ++w)
      for (std::int64_t t = next.fetch_add(1); t < tasks; t = next.fetch_add(1)) task(t);
  });
}

// The keys a query tile [row0, row0 + rows) meets: all S, or with is_causal up to the keys
// its last row sees.
std::int64_t tile_key_end(std::int64_t row0, std::int64_t rows, std::int64_t key_len, bool is_causal) {
  return attention_visible_keys(row0 + rows - 1, key_len, is_causal);
}

// How many of the key tile [key0, key0 + cols) row i sees (0 when it starts past them).
std::int64_t visible_in_tile(std::int64_t row, std::int64_t key0, std::int64_t cols, std::int64_t key_len,
                             bool is_causal) {
  return std::clamp<std::int64_t>(attention_visible_keys(row, key_len, is_causal) - key0, 0, cols);
}

template <class T>
void flash_attention_typed(const FlashAttentionPlan& plan) {
  const AttentionShape& shape = plan.shape;
  const std::int64_t L = shape.query_len, S = shape.key_len, E = shape.head_dim, Ev = shape.value_dim;
  const std::int64_t entries = shape.outer * shape.inner;
  const std::int64_t query_tiles = (L + kQueryTile - 1) / kQueryTile;
  const T* q = static_cast<const T*>(plan.query);
  const T* k = static_cast<const T*>(plan.key);
  const T* v = static_cast<const T*>(plan.value);
  T* out = static_cast<T*>(plan.output);
  T* lse = static_cast<T*>(plan.logsumexp);
  const FlashRowOps<T> ops = row_ops<T>();
  const T minus_infinity = -std::numeric_limits<T>::infinity();
  // kᵀ of every entry, [E, S] each: the size of k, never of the scores.
  std::vector<T> key_t(static_cast<std::size_t>(entries * E * S));
  run_tasks(entries, [&](std::int64_t entry) {
    transpose_rows(row_of(k, plan.key_strides, shape, entry, 0), plan.key_strides.row, S, E, key_t.data() + entry * E * S);
  });

  run_tasks(entries * query_tiles, [&](std::int64_t task) {
    // Causal tiles further down see more keys: hand the heaviest out first.
    const std::int64_t tile = plan.is_causal ? query_tiles - 1 - task / entries : task / entries;
    const std::int64_t entry = task % entries;
    const std::int64_t row0 = tile * kQueryTile, rows = std::min(kQueryTile, L - row0);
    thread_local std::vector<T> scores, acc, max, sum;
    scores.resize(static_cast<std::size_t>(kQueryTile * kKeyTile));
    acc.assign(static_cast<std::size_t>(rows * Ev), T(0));
    max.assign(static_cast<std::size_t>(rows), minus_infinity);
    sum.assign(static_cast<std::size_t>(rows), T(0));
    const T* q_tile = row_of(q, plan.query_strides, shape, entry, row0);
    const std::int64_t key_end = tile_key_end(row0, rows, S, plan.is_causal);
    for (std::int64_t key0 = 0; key0 < key_end; key0 += kKeyTile) {
      const std::int64_t cols = std::min(kKeyTile, key_end - key0);
      tile_gemm<T>(rows, cols, E, q_tile, plan.query_strides.row, 1, key_t.data() + entry * E * S + key0, S, 1,
                   scores.data(), kKeyTile, plan.scale, 0.0);
      for (std::int64_t r = 0; r < rows; ++r) {
        T* s = scores.data() + r * kKeyTile;
        const std::int64_t visible = visible_in_tile(row0 + r, key0, cols, S, plan.is_causal);
        const T new_max = std::max(max[r], ops.max(s, visible));
        if (visible == 0 || new_max == minus_infinity) {  // no key of this tile (or only -inf scores): p = 0
          std::fill(s, s + cols, T(0));
          continue;
        }
        const T tile_sum = ops.exp_shifted_sum(s, visible, new_max);
        std::fill(s + visible, s + cols, T(0));  // keys past the diagonal weigh nothing
        const T correction = ops.exp(max[r] - new_max);  // exp(-inf) = 0 on the first tile
        sum[r] = sum[r] * correction + tile_sum;
        max[r] = new_max;
        if (correction != T(1)) ops.scale(acc.data() + r * Ev, Ev, correction);
      }
      tile_gemm<T>(rows, Ev, cols, scores.data(), kKeyTile, 1, row_of(v, plan.value_strides, shape, entry, key0),
                   plan.value_strides.row, 1, acc.data(), Ev, 1.0, 1.0);
    }
    for (std::int64_t r = 0; r < rows; ++r) {
      T* o = row_of(out, plan.output_strides, shape, entry, row0 + r);
      const T inverse = T(1) / sum[r];
      for (std::int64_t d = 0; d < Ev; ++d) o[d] = acc[r * Ev + d] * inverse;
      lse[entry * L + row0 + r] = max[r] + std::log(sum[r]);
    }
  });
}

template <class T>
void zero_rows(T* data, const AttentionStrides& s, const AttentionShape& shape, std::int64_t entry, std::int64_t rows,
               std::int64_t width) {
  for (std::int64_t r = 0; r < rows; ++r) {
    T* row = row_of(data, s, shape, entry, r);
    std::fill(row, row + width, T(0));
  }
}

template <class T>
void flash_attention_backward_typed(const FlashAttentionBackwardPlan& plan) {
  const AttentionShape& shape = plan.shape;
  const std::int64_t L = shape.query_len, S = shape.key_len, E = shape.head_dim, Ev = shape.value_dim;
  const std::int64_t entries = shape.outer * shape.inner;
  const T* q = static_cast<const T*>(plan.query);
  const T* k = static_cast<const T*>(plan.key);
  const T* v = static_cast<const T*>(plan.value);
  const T* dout = static_cast<const T*>(plan.grad_output);
  const T* out = static_cast<const T*>(plan.output);
  const T* lse = static_cast<const T*>(plan.logsumexp);
  T* delta = static_cast<T*>(plan.delta);
  T* dq = static_cast<T*>(plan.grad_query);
  T* dk = static_cast<T*>(plan.grad_key);
  T* dv = static_cast<T*>(plan.grad_value);
  const FlashRowOps<T> ops = row_ops<T>();
  const double scale = plan.scale;

  run_tasks(entries, [&](std::int64_t entry) {
    thread_local std::vector<T> probabilities, grad_scores, key_t, value_t;
    probabilities.resize(static_cast<std::size_t>(kQueryTile * kKeyTile));
    grad_scores.resize(static_cast<std::size_t>(kQueryTile * kKeyTile));
    key_t.resize(static_cast<std::size_t>(E * S));
    value_t.resize(static_cast<std::size_t>(Ev * S));
    T* p = probabilities.data();
    T* ds = grad_scores.data();
    // This entry's kᵀ [E, S] and vᵀ [Ev, S], for the products q·kᵀ and dO·vᵀ.
    transpose_rows(row_of(k, plan.key_strides, shape, entry, 0), plan.key_strides.row, S, E, key_t.data());
    transpose_rows(row_of(v, plan.value_strides, shape, entry, 0), plan.value_strides.row, S, Ev, value_t.data());
    T* entry_delta = delta + entry * L;
    const T* entry_lse = lse + entry * L;
    for (std::int64_t i = 0; i < L; ++i)
      entry_delta[i] = ops.dot(row_of(dout, plan.grad_output_strides, shape, entry, i),
                               row_of(out, plan.output_strides, shape, entry, i), Ev);
    zero_rows(dq, plan.grad_query_strides, shape, entry, L, E);
    zero_rows(dk, plan.grad_key_strides, shape, entry, S, E);
    zero_rows(dv, plan.grad_value_strides, shape, entry, S, Ev);
    // Key tiles outside, query tiles inside (FlashAttention-2's order): a key tile's dK and dV
    // accumulate in L2 while the query tiles stream past, instead of all of dK and dV (a MiB
    // each at S = 4096) being walked once per query tile. dQ_i still sums its key tiles in
    // order, dK_j and dV_j their query tiles.
    for (std::int64_t key0 = 0; key0 < S; key0 += kKeyTile) {
      const std::int64_t key_tile = std::min(kKeyTile, S - key0);
      const T* k_tile = row_of(k, plan.key_strides, shape, entry, key0);
      T* dk_tile = row_of(dk, plan.grad_key_strides, shape, entry, key0);
      T* dv_tile = row_of(dv, plan.grad_value_strides, shape, entry, key0);
      // With is_causal, query rows before key0 see none of these keys.
      for (std::int64_t row0 = plan.is_causal ? key0 : 0; row0 < L; row0 += kQueryTile) {
        const std::int64_t rows = std::min(kQueryTile, L - row0);
        const std::int64_t cols = std::min(key_tile, tile_key_end(row0, rows, S, plan.is_causal) - key0);
        const T* q_tile = row_of(q, plan.query_strides, shape, entry, row0);
        const T* do_tile = row_of(dout, plan.grad_output_strides, shape, entry, row0);
        // p = exp(scale · q kᵀ - lse), 0 past the diagonal.
        tile_gemm<T>(rows, cols, E, q_tile, plan.query_strides.row, 1, key_t.data() + key0, S, 1, p, kKeyTile, scale,
                     0.0);
        for (std::int64_t r = 0; r < rows; ++r) {
          const std::int64_t visible = visible_in_tile(row0 + r, key0, cols, S, plan.is_causal);
          ops.exp_shifted(p + r * kKeyTile, visible, entry_lse[row0 + r]);
          std::fill(p + r * kKeyTile + visible, p + r * kKeyTile + cols, T(0));
        }
        // dV_j += pᵀ dO_i
        tile_gemm<T>(cols, Ev, rows, p, 1, kKeyTile, do_tile, plan.grad_output_strides.row, 1, dv_tile,
                     plan.grad_value_strides.row, 1.0, 1.0);
        // dS = p ∘ (dO_i V_jᵀ - D_i)
        tile_gemm<T>(rows, cols, Ev, do_tile, plan.grad_output_strides.row, 1, value_t.data() + key0, S, 1, ds,
                     kKeyTile, 1.0, 0.0);
        for (std::int64_t r = 0; r < rows; ++r)
          ops.softmax_grad(ds + r * kKeyTile, p + r * kKeyTile, cols, entry_delta[row0 + r]);
        // dQ_i += scale · dS K_j,  dK_j += scale · dSᵀ Q_i
        tile_gemm<T>(rows, E, cols, ds, kKeyTile, 1, k_tile, plan.key_strides.row, 1,
                     row_of(dq, plan.grad_query_strides, shape, entry, row0), plan.grad_query_strides.row, scale, 1.0);
        tile_gemm<T>(cols, E, rows, ds, 1, kKeyTile, q_tile, plan.query_strides.row, 1, dk_tile,
                     plan.grad_key_strides.row, scale, 1.0);
      }
    }
  });
}

}  // namespace

void flash_attention(const FlashAttentionPlan& plan) {
  EMBER_DISPATCH_FLOATING(plan.dtype, flash_attention_typed<scalar_t>(plan));
}

void flash_attention_backward(const FlashAttentionBackwardPlan& plan) {
  EMBER_DISPATCH_FLOATING(plan.dtype, flash_attention_backward_typed<scalar_t>(plan));
}

EMBER_REGISTER_KERNEL(::ember::flash_attention_kernel, CPU, flash_attention);
EMBER_REGISTER_KERNEL(::ember::flash_attention_backward_kernel, CPU, flash_attention_backward);

}  // namespace ember::cpu
