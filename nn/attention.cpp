// nn/attention.cpp — F::scaled_dot_product_attention (declared in nn/functional.h).
//
// softmax(q·kᵀ · scale + mask) · v, PyTorch's torch.nn.functional.scaled_dot_product_attention,
// written as a chain of ember's differentiable ops, so its gradient (and second gradient)
// is theirs and no backward formula lives here:
//   scores  = (q · scale) · kᵀ          matmul over the broadcast batch dims; kᵀ is a
//                                        transposed view, which the GEMM reads in place
//   scores  = where(mask, scores, -inf) a bool mask (true = may attend), or
//           = scores + mask             a floating one, or
//           = masked_fill(scores, triu(ones(L, S), 1), -inf)   is_causal
//   weights = softmax(scores, -1)       a row with no allowed key: zeros (see below)
//   weights = dropout(weights, p)       F::dropout, the default generator
//   out     = weights · v
// It lives in nn/ beside F::linear and F::dropout because it records no node of its own:
// autograd/ holds the ops that carry a backward formula.
//
// Why q is scaled, not the scores: q has L·E elements, the scores L·S, and S is usually the
// larger (a sequence against a head dim), so scaling q is the cheaper pass both forward and
// backward. PyTorch's own kernels round differently among themselves (its math path scales
// q and k by √scale each, its CPU flash kernel scales inside the product); with a power-of-
// two scale (E = 4, 16, 64, ...) every order gives the same bits.
#include <cmath>
#include <limits>

#include <ember/autograd/grad_mode.h>
#include <ember/autograd/ops.h>
#include <ember/core/factories.h>
#include <ember/core/shape.h>
#include <ember/nn/functional.h>

namespace ember::nn {

namespace {

constexpr double kMinusInfinity = -std::numeric_limits<double>::infinity();

// PyTorch's validate_sdpa_input, in its order and with its words.
void check_attention_inputs(const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& attn_mask,
                            bool is_causal) {
  EMBER_CHECK(query.dtype() == key.dtype() && query.dtype() == value.dtype(), DTypeError,
              "Expected query, key, and value to have the same dtype, but got query.dtype: ",
              c_type_name(query.dtype()), " key.dtype: ", c_type_name(key.dtype()),
              " and value.dtype: ", c_type_name(value.dtype()), " instead.");
  EMBER_CHECK(query.device() == key.device() && query.device() == value.device(), DeviceError,
              "Expected query, key, and value to have the same device type, but got query.device: ",
              query.device().str(), " key.device: ", key.device().str(), " and value.device: ", value.device().str(),
              " instead.");
  EMBER_CHECK(query.dim() >= 2 && key.dim() >= 2 && value.dim() >= 2, ShapeError,
              "Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: ", query.dim(),
              " key.dim: ", key.dim(), " and value.dim: ", value.dim(), " instead.");
  if (attn_mask.defined()) {
    EMBER_CHECK(attn_mask.dtype() == DType::Bool || attn_mask.dtype() == DType::Float32 ||
                    attn_mask.dtype() == query.dtype(),
                DTypeError, "Expected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask.dtype: ",
                c_type_name(attn_mask.dtype()), " and  query.dtype: ", c_type_name(query.dtype()), " instead.");
    EMBER_CHECK(attn_mask.device() == query.device(), DeviceError,
                "Expected attn_mask device to match query device, but got attn_mask.device: ", attn_mask.device().str(),
                " and query.device: ", query.device().str(), " instead.");
  }
  EMBER_CHECK(!(attn_mask.defined() && is_causal), ValueError,
              "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True");
}

// Softmax over the keys, with PyTorch's rule for a row whose scores are all -inf (every key
// masked): zeros, where a plain softmax gives 0/0 = NaN. Such rows are filled with a finite
// score before the softmax and zeroed after it, so the backward pass sees finite weights
// too and the row's gradient is exactly zero instead of NaN.
Tensor softmax_allowing_empty_rows(const Tensor& scores) {
  if (scores.numel() == 0) return ember::softmax(scores, -1);
  Tensor row_hidden;
  {
    NoGradGuard no_grad;  // a mask, not part of the function being differentiated
    row_hidden = ember::amax(scores, {-1}, /*keepdim=*/true).eq(kMinusInfinity);
  }
  Tensor weights = ember::softmax(ember::masked_fill(scores, row_hidden, 0.0), -1);
  return ember::masked_fill(weights, row_hidden, 0.0);
}

}  // namespace

Tensor functional::scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                                const Tensor& attn_mask, double dropout_p, bool is_causal,
                                                std::optional<double> scale) {
  check_attention_inputs(query, key, value, attn_mask, is_causal);
  const double scale_factor = scale.value_or(1.0 / std::sqrt(static_cast<double>(query.size(-1))));
  Tensor scores = ember::matmul(query * scale_factor, ember::transpose(key, -2, -1));

  // Only an explicit mask can hide every key from a query: the causal mask always shows
  // key 0 (it is aligned top-left), and unmasked scores are finite for finite inputs.
  bool rows_may_be_empty = false;
  if (is_causal) {
    const std::int64_t queries = query.size(-2), keys = key.size(-2);
    Tensor future = ember::triu(ember::ones({queries, keys}, TensorOptions().dtype(DType::Bool).device(query.device())), 1);
    scores = ember::masked_fill(scores, future, kMinusInfinity);
  } else if (attn_mask.defined()) {
    broadcast_shapes(scores.sizes(), attn_mask.sizes());  // PyTorch's message when they do not fit
    if (attn_mask.dtype() == DType::Bool) {
      scores = ember::where(attn_mask, scores, ember::full({}, kMinusInfinity, scores.options()));
    } else {
      // Added in the scores' dtype, as PyTorch's in-place add_ (a float32 mask on float64 scores).
      scores = scores + (attn_mask.dtype() == scores.dtype() ? attn_mask : ember::to(attn_mask, scores.dtype()));
    }
    rows_may_be_empty = true;
  }
  Tensor weights = rows_may_be_empty ? softmax_allowing_empty_rows(scores) : ember::softmax(scores, -1);
  // PyTorch applies dropout only for p > 0 (a negative p is no dropout, not an error).
  if (dropout_p > 0.0) weights = functional::dropout(weights, dropout_p, /*training=*/true);
  return ember::matmul(weights, value);
}

}  // namespace ember::nn
