// autograd/attention_ops.cpp — ember::scaled_dot_product_flash_attention: the fused forward
// (core/flash_attention.h) and its backward, one node with PyTorch's name,
// ScaledDotProductFlashAttentionForCpuBackward0 (ScaledDotProductFlashAttentionBackward0 on a GPU).
//
// Issue 21. The node saves q, k, v, the output and the per-row logsumexp (PyTorch's saved
// names); the backward is one fused kernel call that recomputes the scores tile by tile from
// them. Under create_graph (double backward, gradgradcheck) the same gradients are formed
// with public ops instead — the scores and softmax recomputed from q and k, so that the second
// derivative sees how they depend on them (the saved logsumexp is a constant to the tape).
// PyTorch's fused backward has no derivative: its second backward raises "derivative for
// aten::_scaled_dot_product_flash_attention_for_cpu_backward is not implemented"; ember's
// second-order graph is the composite's nodes, as layer_norm's is.
#include <cmath>
#include <limits>

#include <ember/autograd/function.h>
#include <ember/autograd/grad_mode.h>
#include <ember/autograd/ops.h>
#include <ember/core/factories.h>
#include <ember/core/flash_attention.h>
#include <ember/core/profiler.h>

namespace ember {

using autograd::needs_grad;
using autograd::Node;
using autograd::record;
using autograd::TensorList;

namespace {

// The backward with public ops, differentiable again (create_graph = true):
//   p = softmax(scale · q kᵀ, causal mask),  dS = p ∘ (dO vᵀ - Σ_j p ∘ dO vᵀ)
//   dq = scale · dS k,  dk = scale · dSᵀ q,  dv = pᵀ dO
TensorList differentiable_backward(Node& n, const Tensor& grad, const Tensor& q, const Tensor& k, const Tensor& v,
                                   bool is_causal, double scale) {
  Tensor scores = ember::matmul(q, ember::transpose(k, -2, -1)) * scale;
  if (is_causal) {
    Tensor future = ember::triu(
        ember::ones({q.size(-2), k.size(-2)}, TensorOptions().dtype(DType::Bool).device(q.device())), 1);
    scores = ember::masked_fill(scores, future, -std::numeric_limits<double>::infinity());
  }
  Tensor p = ember::softmax(scores, -1);
  Tensor dp = ember::matmul(grad, ember::transpose(v, -2, -1));
  Tensor ds = p * (dp - ember::sum(dp * p, {-1}, /*keepdim=*/true));
  Tensor grad_q, grad_k, grad_v;
  if (n.needs_input_grad(0)) grad_q = ember::matmul(ds, k) * scale;
  if (n.needs_input_grad(1)) grad_k = ember::matmul(ember::transpose(ds, -2, -1), q) * scale;
  if (n.needs_input_grad(2)) grad_v = ember::matmul(ember::transpose(p, -2, -1), grad);
  return {grad_q, grad_k, grad_v};
}

}  // namespace

std::tuple<Tensor, Tensor> scaled_dot_product_flash_attention(const Tensor& query, const Tensor& key,
                                                              const Tensor& value, bool is_causal,
                                                              std::optional<double> scale) {
  EMBER_RECORD_FUNCTION("scaled_dot_product_flash_attention", query, key, value);
  const double scale_factor = scale.value_or(1.0 / std::sqrt(static_cast<double>(query.size(-1))));
  native::FlashAttentionResult result = native::flash_attention(query, key, value, is_causal, scale_factor);
  if (needs_grad(query, key, value)) {
    const char* name = query.device().is_cpu() ? "ScaledDotProductFlashAttentionForCpuBackward0"
                                                : "ScaledDotProductFlashAttentionBackward0";
    auto node = record(name, {query, key, value}, result.output);
    node->save("query", query);
    node->save("key", key);
    node->save("value", value);
    node->save_output("output", result.output);
    node->save("logsumexp", result.logsumexp);
    node->set_backward([is_causal, scale_factor](Node& n, const TensorList& grads) -> TensorList {
      Tensor q = n.saved(0), k = n.saved(1), v = n.saved(2), out = n.saved(3), lse = n.saved(4);
      if (is_grad_enabled()) return differentiable_backward(n, grads[0], q, k, v, is_causal, scale_factor);
      native::FlashAttentionGradients g =
          native::flash_attention_backward(grads[0], q, k, v, out, lse, is_causal, scale_factor);
      return {n.needs_input_grad(0) ? g.grad_query : Tensor(), n.needs_input_grad(1) ? g.grad_key : Tensor(),
              n.needs_input_grad(2) ? g.grad_value : Tensor()};
    });
  }
  return {result.output, result.logsumexp};
}

}  // namespace ember
