// core/flash_attention_plan.h — the plain-data plans of the fused attention kernels
// (core/backend.h).
//
// Issue 21; PyTorch's _scaled_dot_product_flash_attention_for_cpu and its backward. For every
// batch entry (b, h) — the leading dims of q, k, v, folded into at most two, `outer` and
// `inner` (a transformer's batch and heads) — and every query row i < L:
//   s_ij   = scale · q_i · k_j                      j < S; with is_causal only j <= i
//   lse_i  = log Σ_j exp(s_ij)                       (the row's logsumexp)
//   out_i  = Σ_j exp(s_ij - lse_i) · v_j            = softmax(s_i) · V
// The kernels never hold the L×S matrix: the fast ones walk it in tiles with an online
// softmax (a running max and sum per row, FlashAttention), the reference loop one row at a
// time. The causal mask is aligned top-left, as PyTorch's is_causal (tril(ones(L, S))): query
// i sees keys 0..i whatever L and S are, so every row sees key 0 and no row is empty.
//
// The backward recomputes each tile of s from q, k and the saved lse (never stored either):
//   p_ij   = exp(s_ij - lse_i)
//   D_i    = Σ_e dO_ie · O_ie                      (= Σ_j p_ij · dP_ij; computed first)
//   dV_j   = Σ_i p_ij · dO_i
//   dP_ij  = dO_i · v_j
//   dS_ij  = p_ij · (dP_ij - D_i)
//   dQ_i   = scale · Σ_j dS_ij · k_j,   dK_j = scale · Σ_i dS_ij · q_i
//
// Operands are addressed through strides: element e of row r of batch entry (o, n) of an
// operand is at data + o·outer + n·inner + r·row + e (the last dim has unit stride). So the
// heads of a packed projection, x.view(B, T, H, D).transpose(1, 2), are read in place. The
// native layer (core/flash_attention.cpp) checks every argument and folds the leading dims;
// kernels (core/cpu/flash_attention_kernels.cpp, core/reference/flash_attention_loops.cpp,
// cuda/kernels/flash_attention.cuh) only compute. POD, raw pointers, no ownership, one dtype.
#pragma once

#include <cstdint>

#include <ember/core/dtype.h>
#include <ember/core/host_device.h>

namespace ember {

// The strides of one operand, in elements: between batch entries along the two folded
// leading dims, and between rows. The last dim's stride is 1.
struct AttentionStrides {
  std::int64_t outer = 0, inner = 0, row = 0;
};

// The sizes every attention plan shares.
struct AttentionShape {
  std::int64_t outer = 1, inner = 1;  // the folded leading dims (batch entries = outer · inner)
  std::int64_t query_len = 0;         // L
  std::int64_t key_len = 0;           // S
  std::int64_t head_dim = 0;          // E: q's and k's last dim
  std::int64_t value_dim = 0;         // Ev: v's and the output's last dim
};

struct FlashAttentionPlan {
  AttentionShape shape;
  const void* query = nullptr;  // [outer, inner, L, E]
  const void* key = nullptr;    // [outer, inner, S, E]
  const void* value = nullptr;  // [outer, inner, S, Ev]
  void* output = nullptr;       // [outer, inner, L, Ev], written
  // [outer · inner, L], contiguous, written: each row's logsumexp (-inf for a row that saw
  // no key, S == 0, whose output is then 0).
  void* logsumexp = nullptr;
  AttentionStrides query_strides, key_strides, value_strides, output_strides;
  bool is_causal = false;
  double scale = 1.0;
  DType dtype = DType::Float32;
  int device = -1;  // as StridedPlan::device
};

struct FlashAttentionBackwardPlan {
  AttentionShape shape;
  const void* grad_output = nullptr;  // [outer, inner, L, Ev]
  const void* query = nullptr;
  const void* key = nullptr;
  const void* value = nullptr;
  const void* output = nullptr;     // the forward's, [outer, inner, L, Ev]
  const void* logsumexp = nullptr;  // the forward's, [outer · inner, L], contiguous
  // Scratch of outer · inner · L values, contiguous: the kernel writes D_i there first.
  void* delta = nullptr;
  void* grad_query = nullptr;  // written, with q's shape
  void* grad_key = nullptr;    // written, with k's shape
  void* grad_value = nullptr;  // written, with v's shape
  AttentionStrides grad_output_strides, query_strides, key_strides, value_strides, output_strides;
  AttentionStrides grad_query_strides, grad_key_strides, grad_value_strides;
  bool is_causal = false;
  double scale = 1.0;
  DType dtype = DType::Float32;
  int device = -1;
};

// The causal mask, aligned top-left: the number of keys query row i may see.
EMBER_HOST_DEVICE inline std::int64_t attention_visible_keys(std::int64_t row, std::int64_t key_len, bool is_causal) {
  if (!is_causal) return key_len;
  return row + 1 < key_len ? row + 1 : key_len;
}

// The largest head dim (E and Ev) the CUDA kernels take: their tiles of k and v must fit in
// a block's shared memory (cuda/kernels/flash_attention.cuh); larger heads run the composite.
constexpr std::int64_t kFlashAttentionCudaMaxHeadDim = 256;

}  // namespace ember
