// nn/functional.h — the stateless neural-network functions (PyTorch: torch.nn.functional).
//
// Tutorial §3 and §7: `loss = F.cross_entropy(logits, labels)`. In ember:
//   namespace F = ember::nn::functional;
//   auto loss = F::cross_entropy(logits, labels);
// Everything here is a thin, inline forward to the differentiable ops in autograd/ops.h
// (ember::cross_entropy, ember::nll_loss, ...), which record the tape (grad_fn names such
// as NllLossBackward0) and check their arguments with PyTorch's messages. Keeping this
// layer thin means there is exactly one implementation of each loss to read and to test.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include <ember/autograd/ops.h>

namespace ember::nn::functional {

// How a loss turns per-example values into its result: "mean" (default), "sum", "none".
using ember::Reduction;

// ---------------------------------------------------------------- activations
inline Tensor relu(const Tensor& input) { return ember::relu(input); }
inline Tensor sigmoid(const Tensor& input) { return ember::sigmoid(input); }
inline Tensor tanh(const Tensor& input) { return ember::tanh(input); }
// approximate: "none" (x·Φ(x), exact) or "tanh".
inline Tensor gelu(const Tensor& input, std::string_view approximate = "none") { return ember::gelu(input, approximate); }
inline Tensor silu(const Tensor& input) { return ember::silu(input); }
// Softmax over `dim`; the max is subtracted first so large logits do not overflow exp().
inline Tensor softmax(const Tensor& input, std::int64_t dim) { return ember::softmax(input, dim); }
inline Tensor log_softmax(const Tensor& input, std::int64_t dim) { return ember::log_softmax(input, dim); }

// ---------------------------------------------------------------- losses
// input: [N, C] logits (or [C]); target: int64 class indices in [0, C) (or ignore_index).
// Uses log_softmax + nll_loss, never softmax then log, which is how it stays stable.
inline Tensor cross_entropy(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean,
                            std::int64_t ignore_index = -100, double label_smoothing = 0.0) {
  return ember::cross_entropy(input, target, reduction, ignore_index, label_smoothing);
}
// input: log-probabilities [N, C]; target: int64 class indices.
inline Tensor nll_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean,
                       std::int64_t ignore_index = -100) {
  return ember::nll_loss(input, target, reduction, ignore_index);
}
// input: probabilities in [0, 1]; target: same shape, floating. log is clamped at -100 as PyTorch.
inline Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean) {
  return ember::binary_cross_entropy(input, target, reduction);
}
// input: logits; the log-sum-exp trick makes it stable for any logit size.
inline Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                               Reduction reduction = Reduction::Mean) {
  return ember::binary_cross_entropy_with_logits(input, target, reduction);
}
inline Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean) {
  return ember::mse_loss(input, target, reduction);
}

// ---------------------------------------------------------------- convolution and pooling
// PyTorch's F.conv2d: input [N, C_in, H, W] or [C_in, H, W]; weight [C_out, C_in / groups,
// kH, kW]; bias [C_out] or Tensor(). stride / padding / dilation: one int or {h, w}.
inline Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(),
                     const ExpandingArray<2>& stride = 1, const ExpandingArray<2>& padding = 0,
                     const ExpandingArray<2>& dilation = 1, std::int64_t groups = 1) {
  return ember::conv2d(input, weight, bias, stride, padding, dilation, groups);
}
// stride {} (the default) is kernel_size, as PyTorch's stride=None.
inline Tensor max_pool2d(const Tensor& input, const ExpandingArray<2>& kernel_size, const ExpandingArray<2>& stride = {},
                         const ExpandingArray<2>& padding = 0, const ExpandingArray<2>& dilation = 1,
                         bool ceil_mode = false) {
  return ember::max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode);
}
inline Tensor avg_pool2d(const Tensor& input, const ExpandingArray<2>& kernel_size, const ExpandingArray<2>& stride = {},
                         const ExpandingArray<2>& padding = 0, bool ceil_mode = false, bool count_include_pad = true,
                         std::optional<std::int64_t> divisor_override = std::nullopt) {
  return ember::avg_pool2d(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
}
inline Tensor adaptive_avg_pool2d(const Tensor& input, const ExpandingArray<2>& output_size) {
  return ember::adaptive_avg_pool2d(input, output_size);
}

// ---------------------------------------------------------------- normalisation
// torch.nn.functional.batch_norm: input [N, C, ...]; running_mean, running_var, weight, bias:
// [C] or undefined (None). training: normalise with the batch's statistics and update the
// running ones in place (running = (1 - momentum) · running + momentum · batch, the variance
// unbiased); eval: normalise with the running ones. Checks, with PyTorch's messages, that a
// training batch has more than one value per channel and that eps is positive. Defined in
// nn/batch_norm.cpp; nn::BatchNorm1d / BatchNorm2d call it.
Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                  const Tensor& weight = Tensor(), const Tensor& bias = Tensor(), bool training = false,
                  double momentum = 0.1, double eps = 1e-5);
// torch.nn.functional.layer_norm: normalise over the last normalized_shape.size() dims of
// input (which must end in normalized_shape) with each row's mean and biased variance, then
// · weight + bias (normalized_shape, or undefined: None). nn::LayerNorm calls it.
inline Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight = Tensor(),
                         const Tensor& bias = Tensor(), double eps = 1e-5) {
  return ember::layer_norm(input, normalized_shape, weight, bias, eps);
}

// ---------------------------------------------------------------- embedding
// torch.nn.functional.embedding: input int64/int32 indices of any shape, weight
// [num_embeddings, dim] -> [*input.shape, dim]. padding_idx: a row whose gradient stays zero,
// in [-num_embeddings, num_embeddings) (negative counts from the end; ValueError "Padding_idx
// must be within num_embeddings" otherwise); nullopt, PyTorch's None: none. Defined in
// nn/embedding.cpp; nn::Embedding calls ember::embedding directly.
Tensor embedding(const Tensor& input, const Tensor& weight, std::optional<std::int64_t> padding_idx = std::nullopt);

// ---------------------------------------------------------------- linear, dropout, attention
// torch.nn.functional.linear: input [..., in] · weightᵀ + bias; weight [out, in], bias [out]
// or Tensor(). A 2-D input, or a contiguous 3-D one folded to [B·T, in], is one addmm (the
// bias added in the GEMM); other shapes are one matmul (leading dims folded into the GEMM's
// rows) plus the bias. Defined in nn/linear.cpp; nn::Linear calls it.
Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor());
// torch.nn.functional.dropout: in training, zero each element with probability p (drawn
// from the default generator as PyTorch's CPU bernoulli_ draws) and scale the rest by
// 1 / (1 - p); the identity when !training or p == 0. "dropout probability has to be between
// 0 and 1, but got 1.5". Defined in nn/dropout.cpp; nn::Dropout calls it.
Tensor dropout(const Tensor& input, double p = 0.5, bool training = true);
// torch.nn.functional.scaled_dot_product_attention: softmax(q·kᵀ · scale + mask) · v.
// query [..., L, E], key [..., S, E], value [..., S, Ev] (leading dims broadcast) ->
// [..., L, Ev]. scale: 1/sqrt(E) by default. attn_mask, broadcastable to [..., L, S]: bool
// (true = may attend) or floating (added to the scores). is_causal: query i sees keys
// j <= i (tril(ones(L, S)), aligned top-left); not together with attn_mask. A query row
// that may attend nowhere gives zeros (and zero gradients), as PyTorch's CPU kernels do.
// dropout_p > 0 drops attention weights with F::dropout (always: pass 0 in eval, as with
// PyTorch). Defined in nn/attention.cpp: one fused op (ember::scaled_dot_product_flash_attention,
// FlashAttention, grad_fn ScaledDotProductFlashAttentionForCpuBackward0) when it supports the
// case — 4-D q, k, v with one batch size, head count and head dim, no mask, no dropout, L and
// S > 0, unit last strides, float32/64: PyTorch's conditions for its CPU flash kernel, which
// it picks for the same cases; three 3-D inputs run as [1, N, L, E], as PyTorch 2.15's — else
// a composition of differentiable ops (matmul, softmax, matmul). nn/attention.h says how the choice is made and how to force either path
// (nn::SdpaKernelGuard, PyTorch's sdpa_kernel; EMBER_KERNELS=reference picks the composite).
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask = Tensor(), double dropout_p = 0.0, bool is_causal = false,
                                    std::optional<double> scale = std::nullopt);

}  // namespace ember::nn::functional
