// autograd/ops.h — the public, differentiable op API: ember::add, ember::matmul, losses...
//
// Tutorial §2–§4. Every function here does two things:
//   1. computes its result with the kernel-level function of the same name in ember::native
//      (core/native.h), and
//   2. when grad mode is on and an input requires grad, records a graph node (the "tape")
//      whose backward formula is written right next to the forward in the *_ops.cpp file
//      of its family (elementwise_ops.cpp, view_ops.cpp, reduction_ops.cpp, linalg_ops.cpp,
//      indexing_ops.cpp, loss_ops.cpp, conv_ops.cpp, pool_ops.cpp, embedding_ops.cpp).
// The Tensor methods of core/tensor.h marked "(autograd/)" forward to these functions
// (tensor_methods.cpp), so `a.add(b)`, `a + b` and `ember::add(a, b)` are one op.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

#include <ember/core/expanding_array.h>
#include <ember/core/op_list.h>
#include <ember/core/tensor.h>

namespace ember {

// How a loss turns per-element losses into its result (PyTorch's reduction='mean'|'sum'|'none').
enum class Reduction { None, Mean, Sum };

// ---------------------------------------------------------------- elementwise (elementwise_ops.cpp)
Tensor add(const Tensor& a, const Tensor& b, Scalar alpha = 1);
Tensor sub(const Tensor& a, const Tensor& b, Scalar alpha = 1);
// With a number on either side (torch.add(x, 2, alpha=3), torch.mul(2.5, x)): the number
// becomes a 0-d wrapped-number tensor, which promotes like a Python scalar, and the op is
// the tensor op (same node: AddBackward0, ...). Defined in tensor_methods.cpp.
Tensor add(const Tensor& a, Scalar b, Scalar alpha = 1);
Tensor add(Scalar a, const Tensor& b, Scalar alpha = 1);
Tensor sub(const Tensor& a, Scalar b, Scalar alpha = 1);
Tensor sub(Scalar a, const Tensor& b, Scalar alpha = 1);
Tensor mul(const Tensor& a, Scalar b);
Tensor mul(Scalar a, const Tensor& b);
Tensor div(const Tensor& a, Scalar b);
Tensor div(Scalar a, const Tensor& b);
// Every unary and binary row of core/op_list.h (exp, sigmoid, gelu, ..., mul, pow,
// maximum, the comparisons): Tensor exp(const Tensor& self); Tensor mul(const Tensor& a,
// const Tensor& b); ... Comparisons return bool tensors and are never differentiable; sign
// is not differentiable either (gradient zero, like PyTorch).
#define EMBER_DECLARE_UNARY(name, ...) Tensor name(const Tensor& self);
#define EMBER_DECLARE_BINARY(name, ...) Tensor name(const Tensor& a, const Tensor& b);
EMBER_UNARY_OPS(EMBER_DECLARE_UNARY)
EMBER_BINARY_OPS(EMBER_DECLARE_BINARY)
#undef EMBER_DECLARE_BINARY
#undef EMBER_DECLARE_UNARY
// gelu(x, "none") is gelu(x); gelu(x, "tanh") the tanh approximation
// (torch.nn.functional.gelu's approximate=; "approximate argument must be either none or tanh.").
Tensor gelu(const Tensor& self, std::string_view approximate);
Tensor pow(const Tensor& self, Scalar exponent);
Tensor clamp(const Tensor& self, std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt);
// Tensor bounds (torch.clamp(x, min_tensor, max_tensor)): broadcast and promoted with x.
Tensor clamp(const Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max);
Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b);
Tensor masked_fill(const Tensor& self, const Tensor& mask, Scalar value);
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Tensor& value);  // value: 0-d

// ---------------------------------------------------------------- views and copies (view_ops.cpp)
Tensor view(const Tensor& self, IntArrayRef sizes);
Tensor reshape(const Tensor& self, IntArrayRef sizes);
Tensor transpose(const Tensor& self, std::int64_t dim0, std::int64_t dim1);
Tensor t(const Tensor& self);
Tensor permute(const Tensor& self, IntArrayRef dims);
Tensor squeeze(const Tensor& self);
Tensor squeeze(const Tensor& self, std::int64_t dim);
Tensor unsqueeze(const Tensor& self, std::int64_t dim);
Tensor flatten(const Tensor& self, std::int64_t start_dim = 0, std::int64_t end_dim = -1);
Tensor expand(const Tensor& self, IntArrayRef sizes);
Tensor select(const Tensor& self, std::int64_t dim, std::int64_t index);
Tensor narrow(const Tensor& self, std::int64_t dim, std::int64_t start, std::int64_t length);
Tensor slice(const Tensor& self, std::int64_t dim, std::optional<std::int64_t> start = std::nullopt,
             std::optional<std::int64_t> end = std::nullopt, std::int64_t step = 1);
// reshape recorded as PyTorch's _unsafe_view (UnsafeViewBackward0, never a tracked view):
// how matmul gives its result the final shape.
Tensor unsafe_view(const Tensor& self, IntArrayRef sizes);
Tensor contiguous(const Tensor& self);
Tensor clone(const Tensor& self);
Tensor to(const Tensor& self, DType dtype);
Tensor to(const Tensor& self, Device device, bool non_blocking = false);
Tensor pin_memory(const Tensor& self);  // differentiable: the gradient passes through (pin_memory_op.cpp)
// Sums `gradient` over broadcast dimensions so it has `sizes` (the shape of the input that
// was broadcast). Every broadcasting op's backward uses it.
Tensor sum_to(const Tensor& gradient, IntArrayRef sizes);

// ---------------------------------------------------------------- reductions (reduction_ops.cpp)
Tensor sum(const Tensor& self, IntArrayRef dims = {}, bool keepdim = false, std::optional<DType> dtype = std::nullopt);
Tensor mean(const Tensor& self, IntArrayRef dims = {}, bool keepdim = false, std::optional<DType> dtype = std::nullopt);
Tensor prod(const Tensor& self, IntArrayRef dims = {}, bool keepdim = false, std::optional<DType> dtype = std::nullopt);
Tensor amax(const Tensor& self, IntArrayRef dims = {}, bool keepdim = false);
Tensor amin(const Tensor& self, IntArrayRef dims = {}, bool keepdim = false);
Tensor max(const Tensor& self);  // over all elements
Tensor min(const Tensor& self);
std::tuple<Tensor, Tensor> max(const Tensor& self, std::int64_t dim, bool keepdim = false);
std::tuple<Tensor, Tensor> min(const Tensor& self, std::int64_t dim, bool keepdim = false);
Tensor argmax(const Tensor& self, std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false);
Tensor argmin(const Tensor& self, std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false);
Tensor softmax(const Tensor& self, std::int64_t dim);
Tensor log_softmax(const Tensor& self, std::int64_t dim);
// torch.topk: (values, int64 indices) of the k largest (largest=false: smallest) along dim,
// NaN counting as the largest; ties in PyTorch's CPU order (core/topk_plan.h). Differentiable
// in values (TopkBackward0: the gradient goes to the chosen indices). topk_ops.cpp; a GPU
// tensor is selected on the CPU and copied back.
std::tuple<Tensor, Tensor> topk(const Tensor& self, std::int64_t k, std::int64_t dim = -1, bool largest = true,
                                bool sorted = true);

// ---------------------------------------------------------------- triangles (triangular_ops.cpp)
// torch.tril / torch.triu over the last two dims: keep [i, j] where j <= i + diagonal (tril)
// or j >= i + diagonal (triu), zero the rest. "tril: input tensor must have at least 2 dimensions".
Tensor tril(const Tensor& self, std::int64_t diagonal = 0);
Tensor triu(const Tensor& self, std::int64_t diagonal = 0);

// ---------------------------------------------------------------- linear algebra (linalg_ops.cpp)
Tensor matmul(const Tensor& a, const Tensor& b);
Tensor mm(const Tensor& a, const Tensor& b);
Tensor bmm(const Tensor& a, const Tensor& b);
Tensor addmm(const Tensor& bias, const Tensor& a, const Tensor& b, Scalar beta = 1, Scalar alpha = 1);

// ---------------------------------------------------------------- indexing (indexing_ops.cpp)
Tensor cat(const std::vector<Tensor>& tensors, std::int64_t dim = 0);
Tensor stack(const std::vector<Tensor>& tensors, std::int64_t dim = 0);
Tensor index_select(const Tensor& self, std::int64_t dim, const Tensor& index);
Tensor index_add(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& source);
Tensor gather(const Tensor& self, std::int64_t dim, const Tensor& index);
Tensor scatter_add(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& source);
Tensor one_hot(const Tensor& self, std::int64_t num_classes = -1);  // not differentiable (int64)

// ---------------------------------------------------------------- convolution (conv_ops.cpp)
// PyTorch's conv2d: input [N, C_in, H, W] (or unbatched [C_in, H, W]), weight
// [C_out, C_in / groups, kH, kW], bias [C_out] or an undefined Tensor(). stride, padding and
// dilation are one int or {h, w}. grad_fn=<ConvolutionBackward0>.
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(), const ExpandingArray<2>& stride = 1,
              const ExpandingArray<2>& padding = 0, const ExpandingArray<2>& dilation = 1, std::int64_t groups = 1);

// ---------------------------------------------------------------- pooling (pool_ops.cpp)
// input [N, C, H, W] or [C, H, W]. stride {} (the default) means stride = kernel_size.
Tensor max_pool2d(const Tensor& input, const ExpandingArray<2>& kernel_size, const ExpandingArray<2>& stride = {},
                  const ExpandingArray<2>& padding = 0, const ExpandingArray<2>& dilation = 1, bool ceil_mode = false);
Tensor avg_pool2d(const Tensor& input, const ExpandingArray<2>& kernel_size, const ExpandingArray<2>& stride = {},
                  const ExpandingArray<2>& padding = 0, bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<std::int64_t> divisor_override = std::nullopt);
Tensor adaptive_avg_pool2d(const Tensor& input, const ExpandingArray<2>& output_size);

// ---------------------------------------------------------------- losses (loss_ops.cpp)
// input: probabilities in [0, 1]; target: same shape. log is clamped at -100, as PyTorch.
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);
// input: logits; stable for any logit size.
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        Reduction reduction = Reduction::Mean);
// input: log-probabilities [N, C] (or [C], or [N, C, d1, ...]); target: int64 class
// indices [N] (or 0-d, or [N, d1, ...]).
Tensor nll_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean,
                std::int64_t ignore_index = -100);
// log_softmax + nll_loss; label_smoothing mixes in the uniform distribution, as PyTorch.
Tensor cross_entropy(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean,
                     std::int64_t ignore_index = -100, double label_smoothing = 0.0);
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);

// ---------------------------------------------------------------- normalisation (batch_norm_ops.cpp)
// torch.batch_norm: input [N, C, ...]; weight, bias, running_mean, running_var: [C] or
// undefined (None). Training normalises with the batch statistics and updates the running
// ones in place; eval uses the running ones. grad_fn NativeBatchNormBackward0 (inputs:
// input, weight, bias). F::batch_norm (nn/functional.h) adds PyTorch's Python-level checks.
Tensor batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                  const Tensor& running_var, bool training, double momentum, double eps);
// torch.layer_norm (layer_norm_ops.cpp): normalise over the last normalized_shape.size() dims
// of input (which must end in normalized_shape), the variance biased; weight, bias:
// normalized_shape or undefined (None). grad_fn NativeLayerNormBackward0 (inputs: input,
// weight, bias). F::layer_norm and nn::LayerNorm (nn/layer_norm.h) call it.
Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight = Tensor(),
                  const Tensor& bias = Tensor(), double eps = 1e-5);

// ---------------------------------------------------------------- attention (attention_ops.cpp)
// PyTorch's torch.ops.aten._scaled_dot_product_flash_attention_for_cpu: softmax(q·kᵀ · scale)
// · v as one fused kernel (FlashAttention: tiles and an online softmax, the L×S scores never
// held; core/flash_attention.h). query [..., L, E], key [..., S, E], value [..., S, Ev], the
// same leading dims (no broadcasting), float32 or float64, CPU or CUDA. is_causal: query i
// sees keys 0..i (top-left). scale: 1/sqrt(E) by default. Returns (output [..., L, Ev],
// logsumexp [..., L]); only the output is differentiable. grad_fn
// ScaledDotProductFlashAttentionForCpuBackward0 on the CPU, ScaledDotProductFlashAttentionBackward0
// on a GPU (inputs: query, key, value); its backward is the fused backward kernel, and under
// create_graph the composite's formula, so double backward works (PyTorch's does not:
// "derivative for aten::_scaled_dot_product_flash_attention_for_cpu_backward is not
// implemented"). F::scaled_dot_product_attention calls it when it can (nn/attention.h).
std::tuple<Tensor, Tensor> scaled_dot_product_flash_attention(const Tensor& query, const Tensor& key,
                                                              const Tensor& value, bool is_causal = false,
                                                              std::optional<double> scale = std::nullopt);

// ---------------------------------------------------------------- embedding (embedding_ops.cpp)
// torch.embedding: weight [num_embeddings, dim]; indices int64 or int32 of any shape. Returns
// weight's rows, shape indices.shape + [dim]; grad_fn EmbeddingBackward0. padding_idx: a row
// whose gradient stays zero (-1: none); F::embedding (nn/functional.h) takes PyTorch's
// Python-level padding_idx (negative counts from the end). The weight gradient is summed per
// row in input order, the same bits on every backend and run (core/embedding_plan.h).
Tensor embedding(const Tensor& weight, const Tensor& indices, std::int64_t padding_idx = -1);
// The weight gradient of embedding (torch.embedding_dense_backward without
// scale_grad_by_freq): grad [indices.shape..., dim] -> [num_weights, dim]. Differentiable in
// grad (EmbeddingDenseBackward0).
Tensor embedding_backward(const Tensor& grad, const Tensor& indices, std::int64_t num_weights,
                          std::int64_t padding_idx = -1);

}  // namespace ember
