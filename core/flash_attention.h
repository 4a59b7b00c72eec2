// core/flash_attention.h — the native (kernel-level, no autograd) fused attention ops.
//
// Issue 21; PyTorch's _scaled_dot_product_flash_attention_for_cpu and its backward. The
// differentiable op is ember::scaled_dot_product_flash_attention (autograd/attention_ops.cpp),
// which F::scaled_dot_product_attention (nn/attention.cpp) picks when it can. What is
// computed: core/flash_attention_plan.h; how: core/cpu/flash_attention_kernels.cpp (tiles,
// online softmax), core/reference/flash_attention_loops.cpp (one row at a time) and
// cuda/kernels/flash_attention.cuh.
#pragma once

#include <ember/core/tensor.h>

namespace ember::native {

struct FlashAttentionResult {
  // [..., L, Ev], contiguous — except for 4-D q [B, H, L, E] whose heads are interleaved in
  // memory ([B, L, H, E], the heads of a packed projection): then, as PyTorch's, the output is
  // [B, L, H, Ev] in memory seen through a transpose, so that the usual next step,
  // out.transpose(1, 2).reshape(B, L, H·Ev), is a view and not a copy.
  Tensor output;
  // [..., L], q's dtype (float32 for a 16-bit q), contiguous: log Σ_j exp(s_ij) per query row. (PyTorch's CPU kernel
  // lays its logsumexp out as [B, L, H]; the values are the same.)
  Tensor logsumexp;
};

// query [..., L, E], key [..., S, E], value [..., S, Ev]: the same leading dims (no
// broadcasting), at least 2-D, one floating dtype (bfloat16 and float16 computed in float32)
// and one device.
// is_causal: query i sees keys 0..i (top-left). scale multiplies q·kᵀ. L or S may be 0 (S
// == 0: the output is 0 and the logsumexp -inf). Inputs are read through their strides;
// only an operand whose last dim is strided is copied first.
FlashAttentionResult flash_attention(const Tensor& query, const Tensor& key, const Tensor& value, bool is_causal,
                                     double scale);

struct FlashAttentionGradients {
  Tensor grad_query, grad_key, grad_value;  // contiguous, shaped as query, key, value
};

// The gradients of flash_attention's output w.r.t. query, key and value, given the output
// gradient and the forward's output and logsumexp (the scores are recomputed tile by tile).
FlashAttentionGradients flash_attention_backward(const Tensor& grad_output, const Tensor& query, const Tensor& key,
                                                 const Tensor& value, const Tensor& output, const Tensor& logsumexp,
                                                 bool is_causal, double scale);

}  // namespace ember::native
