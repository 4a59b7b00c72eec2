// core/reference/flash_attention_loops.cpp — fused attention, one query row at a time
// (EMBER_KERNELS=reference; the definitions are in core/flash_attention_plan.h).
//
// Read this before core/cpu/flash_attention_kernels.cpp. For each query row the loop forms
// that row's scores s_j = scale · q·k_j (one row of S values: the only scores ever held),
// its max, Σ exp(s_j - max), and the output Σ_j p_j · v_j with p_j = exp(s_j - max) / Σ. The
// row's logsumexp, max + log Σ, is what the backward needs to rebuild p_j from s_j alone.
// Sums in double. No tiles, no threads: the fast kernel computes the same thing in blocks of
// rows and keys, with a running max instead of the row's final one.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <ember/core/backend.h>
#include <ember/core/dispatch.h>
#include <ember/core/error.h>
#include <ember/core/reference/reference_kernels.h>

namespace ember::reference {

namespace {

// Row r of batch entry (o, n) of an operand.
template <class T>
T* row_of(T* data, const AttentionStrides& s, std::int64_t o, std::int64_t n, std::int64_t r) {
  return data + o * s.outer + n * s.inner + r * s.row;
}

template <class T>
double dot(const T* a, const T* b, std::int64_t n) {
  double sum = 0.0;
  for (std::int64_t e = 0; e < n; ++e) sum += static_cast<double>(a[e]) * static_cast<double>(b[e]);
  return sum;
}

template <class T>
void flash_attention_typed(const FlashAttentionPlan& plan) {
  const AttentionShape& shape = plan.shape;
  const T* q = static_cast<const T*>(plan.query);
  const T* k = static_cast<const T*>(plan.key);
  const T* v = static_cast<const T*>(plan.value);
  T* out = static_cast<T*>(plan.output);
  T* lse = static_cast<T*>(plan.logsumexp);
  std::vector<double> scores(static_cast<std::size_t>(shape.key_len));
  std::vector<double> acc(static_cast<std::size_t>(shape.value_dim));
  for (std::int64_t o = 0; o < shape.outer; ++o)
    for (std::int64_t n = 0; n < shape.inner; ++n)
      for (std::int64_t i = 0; i < shape.query_len; ++i) {
        const T* qi = row_of(q, plan.query_strides, o, n, i);
        const std::int64_t visible = attention_visible_keys(i, shape.key_len, plan.is_causal);
        double max = -std::numeric_limits<double>::infinity();
        for (std::int64_t j = 0; j < visible; ++j) {
          scores[j] = plan.scale * dot(qi, row_of(k, plan.key_strides, o, n, j), shape.head_dim);
          max = std::max(max, scores[j]);
        }
        double sum = 0.0;
        for (std::int64_t j = 0; j < visible; ++j) sum += std::exp(scores[j] - max);
        std::fill(acc.begin(), acc.end(), 0.0);
        for (std::int64_t j = 0; j < visible; ++j) {
          const double p = std::exp(scores[j] - max) / sum;
          const T* vj = row_of(v, plan.value_strides, o, n, j);
          for (std::int64_t d = 0; d < shape.value_dim; ++d) acc[d] += p * static_cast<double>(vj[d]);
        }
        T* oi = row_of(out, plan.output_strides, o, n, i);
        for (std::int64_t d = 0; d < shape.value_dim; ++d) oi[d] = static_cast<T>(acc[d]);
        lse[(o * shape.inner + n) * shape.query_len + i] = static_cast<T>(max + std::log(sum));
      }
}

template <class T>
void flash_attention_backward_typed(const FlashAttentionBackwardPlan& plan) {
  const AttentionShape& shape = plan.shape;
  const std::int64_t L = shape.query_len, S = shape.key_len, E = shape.head_dim, Ev = shape.value_dim;
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
  // One batch entry's key and value gradients, summed over its query rows in double.
  std::vector<double> dk_sum(static_cast<std::size_t>(S * E)), dv_sum(static_cast<std::size_t>(S * Ev));
  std::vector<double> dq_row(static_cast<std::size_t>(E));
  for (std::int64_t o = 0; o < shape.outer; ++o)
    for (std::int64_t n = 0; n < shape.inner; ++n) {
      const std::int64_t entry = o * shape.inner + n;
      // D_i = dO_i · O_i, first, for every row.
      for (std::int64_t i = 0; i < L; ++i)
        delta[entry * L + i] = static_cast<T>(dot(row_of(dout, plan.grad_output_strides, o, n, i),
                                                  row_of(out, plan.output_strides, o, n, i), Ev));
      std::fill(dk_sum.begin(), dk_sum.end(), 0.0);
      std::fill(dv_sum.begin(), dv_sum.end(), 0.0);
      for (std::int64_t i = 0; i < L; ++i) {
        const T* qi = row_of(q, plan.query_strides, o, n, i);
        const T* doi = row_of(dout, plan.grad_output_strides, o, n, i);
        const double row_lse = static_cast<double>(lse[entry * L + i]);
        const double row_delta = static_cast<double>(delta[entry * L + i]);
        std::fill(dq_row.begin(), dq_row.end(), 0.0);
        const std::int64_t visible = attention_visible_keys(i, S, plan.is_causal);
        for (std::int64_t j = 0; j < visible; ++j) {
          const T* kj = row_of(k, plan.key_strides, o, n, j);
          const T* vj = row_of(v, plan.value_strides, o, n, j);
          const double p = std::exp(plan.scale * dot(qi, kj, E) - row_lse);  // softmax weight, rebuilt
          const double ds = p * (dot(doi, vj, Ev) - row_delta);                // d loss / d s_ij
          for (std::int64_t d = 0; d < Ev; ++d) dv_sum[j * Ev + d] += p * static_cast<double>(doi[d]);
          for (std::int64_t e = 0; e < E; ++e) {
            dq_row[e] += ds * static_cast<double>(kj[e]);
            dk_sum[j * E + e] += ds * static_cast<double>(qi[e]);
          }
        }
        T* dqi = row_of(dq, plan.grad_query_strides, o, n, i);
        for (std::int64_t e = 0; e < E; ++e) dqi[e] = static_cast<T>(plan.scale * dq_row[e]);
      }
      for (std::int64_t j = 0; j < S; ++j) {
        T* dkj = row_of(dk, plan.grad_key_strides, o, n, j);
        T* dvj = row_of(dv, plan.grad_value_strides, o, n, j);
        for (std::int64_t e = 0; e < E; ++e) dkj[e] = static_cast<T>(plan.scale * dk_sum[j * E + e]);
        for (std::int64_t d = 0; d < Ev; ++d) dvj[d] = static_cast<T>(dv_sum[j * Ev + d]);
      }
    }
}

}  // namespace

void flash_attention(const FlashAttentionPlan& plan) {
  EMBER_DISPATCH_FLOATING(plan.dtype, flash_attention_typed<scalar_t>(plan));
}

void flash_attention_backward(const FlashAttentionBackwardPlan& plan) {
  EMBER_DISPATCH_FLOATING(plan.dtype, flash_attention_backward_typed<scalar_t>(plan));
}

EMBER_REGISTER_KERNEL(::ember::flash_attention_kernel, CPUReference, flash_attention);
EMBER_REGISTER_KERNEL(::ember::flash_attention_backward_kernel, CPUReference, flash_attention_backward);

}  // namespace ember::reference
