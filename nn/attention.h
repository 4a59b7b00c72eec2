// nn/attention.h — which implementation F::scaled_dot_product_attention runs, and how to
// choose one (PyTorch's torch.nn.attention.SDPBackend and sdpa_kernel).
//
// Issue 21. F::scaled_dot_product_attention (nn/functional.h, nn/attention.cpp) has two:
//   SDPBackend::FlashAttention  ember::scaled_dot_product_flash_attention, one fused kernel
//                               (tiles and an online softmax; the L×S scores never held),
//                               grad_fn ScaledDotProductFlashAttentionForCpuBackward0;
//   SDPBackend::Math            the composite: matmul, softmax, matmul as ember ops (every
//                               mask, dropout, broadcasting), grad_fn from its last matmul.
// As PyTorch on the CPU, the fused one runs whenever it supports the case
// (can_use_flash_attention below) and the composite otherwise; three 3-D inputs [N, L, E] are
// first viewed as [1, N, L, E] and the output squeezed, as PyTorch 2.15 does (so they reach the
// fused kernel too, and the output's grad_fn is SqueezeBackward1). Two differences: ember's fused
// kernel takes no attn_mask (PyTorch's CPU kernel does; with a mask ember runs the composite),
// and EMBER_KERNELS=reference (core/kernel_mode.h) picks the composite by default, as it
// unfuses the training step's other fused ops — the plain path a reader steps through first.
//
// To force a path (tests, benchmarks, a learner comparing the two), restrict the choice for a
// scope, as torch.nn.attention.sdpa_kernel does:
//     { nn::SdpaKernelGuard math(nn::SDPBackend::Math); y = F::scaled_dot_product_attention(q, k, v); }
//     { nn::SdpaKernelGuard flash(nn::SDPBackend::FlashAttention); ... }  // also under EMBER_KERNELS=reference:
//                                                                         // the fused op on the reference loops
// With only FlashAttention allowed, a case it does not support throws ("No available kernel.
// Aborting execution. Flash attention kernel not used because: ..."), as in PyTorch. The
// setting is process-wide, like PyTorch's (torch.backends.cuda.enable_flash_sdp).
#pragma once

#include <initializer_list>
#include <string>

#include <ember/core/tensor.h>

namespace ember::nn {

// torch.nn.attention.SDPBackend (the two ember has).
enum class SDPBackend { Math, FlashAttention };

// torch.backends.cuda.flash_sdp_enabled() / math_sdp_enabled(): may F::scaled_dot_product_attention
// use this backend? Both are enabled at start.
bool sdp_backend_enabled(SDPBackend backend);
// torch.backends.cuda.enable_flash_sdp(enabled) / enable_math_sdp(enabled).
void set_sdp_backend_enabled(SDPBackend backend, bool enabled);

// torch.nn.attention.sdpa_kernel(backends): only `backends` are enabled while the guard
// lives; the previous setting comes back after.
class SdpaKernelGuard {
 public:
  explicit SdpaKernelGuard(std::initializer_list<SDPBackend> backends);
  explicit SdpaKernelGuard(SDPBackend backend) : SdpaKernelGuard({backend}) {}
  ~SdpaKernelGuard();
  SdpaKernelGuard(const SdpaKernelGuard&) = delete;
  SdpaKernelGuard& operator=(const SdpaKernelGuard&) = delete;

 private:
  bool previous_math_, previous_flash_;
};

// torch.backends.cuda.can_use_flash_attention: can the fused kernel run
// F::scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal)? PyTorch's
// conditions for its CPU kernel, in its order: FlashAttention enabled, dropout_p <= 0, q, k, v
// 4-D with the same batch size and number of heads (no broadcasting), no attn_mask (ember's
// own condition), one head dim for q, k and v, key and value of one length (ember's: PyTorch's
// kernel does not check), L > 0 and S > 0, last dims of stride 1,
// float32 or float64; then ember's: a CPU tensor, or a CUDA one with head dim <= 256 in a
// build with the CUDA kernels. When it cannot and `why` is given, *why receives the first
// failed condition (PyTorch's warning text where PyTorch has one). EMBER_KERNELS is not asked.
bool can_use_flash_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                             const Tensor& attn_mask = Tensor(), double dropout_p = 0.0, bool is_causal = false,
                             std::string* why = nullptr);

// The backend F::scaled_dot_product_attention runs for these arguments now: FlashAttention
// when it can and is enabled (and, under EMBER_KERNELS=reference, when Math is disabled),
// else Math when enabled; neither throws "No available kernel. Aborting execution." with the
// reason the fused kernel was not used.
SDPBackend select_sdp_backend(const Tensor& query, const Tensor& key, const Tensor& value,
                              const Tensor& attn_mask = Tensor(), double dropout_p = 0.0, bool is_causal = false);

}  // namespace ember::nn
