// nn/attention.cpp — F::scaled_dot_product_attention (declared in nn/functional.h) and the
// choice between its two implementations (nn/attention.h).
//
// softmax(q·kᵀ · scale + mask) · v, PyTorch's torch.nn.functional.scaled_dot_product_attention.
// When the case allows (select_sdp_backend: no mask, no dropout, 4-D heads of one batch, ...)
// it is one fused op, ember::scaled_dot_product_flash_attention (autograd/attention_ops.cpp;
// kernels core/cpu/flash_attention_kernels.cpp, cuda/kernels/flash_attention.cuh), as PyTorch
// runs its CPU flash kernel for the same cases. Otherwise — and by default under
// EMBER_KERNELS=reference — it is the composite below, a chain of ember's differentiable ops,
// so its gradient (and second gradient) is theirs and no backward formula lives here:
//   scores  = (q · scale) · kᵀ          matmul over the broadcast batch dims; kᵀ is a
//                                        transposed view, which the GEMM reads in place
//   scores  = where(mask, scores, -inf) a bool mask (true = may attend), or
//           = scores + mask             a floating one, or
//           = masked_fill(scores, triu(ones(L, S), 1), -inf)   is_causal
//   weights = softmax(scores, -1)       a row with no allowed key: zeros (see below)
//   weights = dropout(weights, p)       F::dropout, the default generator
//   out     = weights · v
// Read the composite first: the fused kernels compute exactly this, tile by tile.
// It lives in nn/ beside F::linear and F::dropout because it records no node of its own:
// autograd/ holds the ops that carry a backward formula.
//
// Why q is scaled, not the scores: q has L·E elements, the scores L·S, and S is usually the
// larger (a sequence against a head dim), so scaling q is the cheaper pass both forward and
// backward. PyTorch's own kernels round differently among themselves (its math path scales
// q and k by √scale each, its CPU flash kernel — and ember's — scales inside the product);
// with a power-of-two scale (E = 4, 16, 64, ...) every order gives the same bits.
#include <ember/autograd/autocast.h>
#include <ember/nn/attention.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <sstream>

#include <ember/autograd/grad_mode.h>
#include <ember/autograd/ops.h>
#include <ember/core/backend.h>
#include <ember/core/factories.h>
#include <ember/core/kernel_mode.h>
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

// The backends F::scaled_dot_product_attention may use (nn/attention.h): process-wide, as
// PyTorch's global context flags.
std::atomic<bool> math_enabled{true};
std::atomic<bool> flash_enabled{true};

std::string sizes_of(const Tensor& t) { return shape_to_string(t.sizes()); }

// The first condition of can_use_flash_attention that fails, or "" (nn/attention.h).
std::string flash_attention_unsupported_reason(const Tensor& query, const Tensor& key, const Tensor& value,
                                               const Tensor& attn_mask, double dropout_p) {
  std::ostringstream why;
  if (!flash_enabled.load(std::memory_order_relaxed)) return "Flash attention has been runtime disabled.";
  if (dropout_p > 0.0) return "Both fused kernels do not support non-zero dropout.";
  if (query.dim() != 4 || key.dim() != 4 || value.dim() != 4) {
    why << "All fused kernels requires query, key and value to be 4 dimensional, but got Query dim: " << query.dim()
        << ", Key dim: " << key.dim() << ", Value dim: " << value.dim() << " instead.";
    return why.str();
  }
  if (query.size(0) != key.size(0) || query.size(0) != value.size(0)) {
    why << "For dense inputs, both fused kernels require query, key and value to have the same batch_size. "
        << "Query.sizes(): " << sizes_of(query) << ", Key.sizes(): " << sizes_of(key)
        << ", Value.sizes(): " << sizes_of(value)
        << " instead. To broadcast dense inputs, try using unsqueeze and expand_to before passing them into the kernel.";
    return why.str();
  }
  if (query.size(1) != key.size(1) || query.size(1) != value.size(1)) {
    why << "For dense input, both fused kernels require query, key and value to have the same num_heads. "
        << "Query.sizes(): " << sizes_of(query) << ", Key sizes(): " << sizes_of(key)
        << ", Value sizes(): " << sizes_of(value)
        << " instead. To broadcast dense inputs, try using unsqueeze and expand_to before passing them into the kernel.";
    return why.str();
  }
  if (attn_mask.defined()) return "ember's flash attention kernel takes no attn_mask (the composite applies it).";
  if (query.size(-1) != key.size(-1) || query.size(-1) != value.size(-1)) {
    why << "Flash attention requires q,k,v to have the same last dimension. Got Query.size(-1): " << query.size(-1)
        << ", Key.size(-1): " << key.size(-1) << ", Value.size(-1): " << value.size(-1) << " instead.";
    return why.str();
  }
  if (key.size(-2) != value.size(-2)) {  // PyTorch's kernel reads past value's end; the composite reports it
    why << "ember's flash attention kernel needs key and value of one length, got Key.size(-2): " << key.size(-2)
        << ", Value.size(-2): " << value.size(-2) << ".";
    return why.str();
  }
  if (query.size(-2) == 0 || key.size(-2) == 0) return "All fused kernels do not support zero seq_len_q or seq_len_kv.";
  if (query.stride(-1) != 1 || key.stride(-1) != 1 || value.stride(-1) != 1) {
    why << "All fused kernels require the last dimension of the input to have stride 1. Got Query.stride(-1): "
        << query.stride(-1) << ", Key.stride(-1): " << key.stride(-1) << ", Value.stride(-1): " << value.stride(-1)
        << " instead.";
    return why.str();
  }
  if (!is_floating_point(query.dtype())) {
    why << "Expected query, key and value to all be of dtype: {Float, Double, BFloat16, Half}. Got Query dtype: "
        << c_type_name(query.dtype()) << ", Key dtype: " << c_type_name(key.dtype())
        << ", and Value dtype: " << c_type_name(value.dtype()) << " instead.";
    return why.str();
  }
  if (!flash_attention_kernel.has_kernel(query.device())) {
    why << "ember has no flash attention kernel for device " << query.device().str() << ".";
    return why.str();
  }
  if (!query.device().is_cpu() && query.size(-1) > kFlashAttentionCudaMaxHeadDim) {
    why << "ember's CUDA flash attention kernel takes head dims up to " << kFlashAttentionCudaMaxHeadDim
        << ", got " << query.size(-1) << ".";
    return why.str();
  }
  return {};
}

}  // namespace

bool sdp_backend_enabled(SDPBackend backend) {
  return (backend == SDPBackend::Math ? math_enabled : flash_enabled).load(std::memory_order_relaxed);
}

void set_sdp_backend_enabled(SDPBackend backend, bool enabled) {
  (backend == SDPBackend::Math ? math_enabled : flash_enabled).store(enabled, std::memory_order_relaxed);
}

SdpaKernelGuard::SdpaKernelGuard(std::initializer_list<SDPBackend> backends)
    : previous_math_(sdp_backend_enabled(SDPBackend::Math)), previous_flash_(sdp_backend_enabled(SDPBackend::FlashAttention)) {
  for (SDPBackend backend : {SDPBackend::Math, SDPBackend::FlashAttention})
    set_sdp_backend_enabled(backend, std::find(backends.begin(), backends.end(), backend) != backends.end());
}

SdpaKernelGuard::~SdpaKernelGuard() {
  set_sdp_backend_enabled(SDPBackend::Math, previous_math_);
  set_sdp_backend_enabled(SDPBackend::FlashAttention, previous_flash_);
}

bool can_use_flash_attention(const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& attn_mask,
                             double dropout_p, bool /*is_causal*/, std::string* why) {
  std::string reason = flash_attention_unsupported_reason(query, key, value, attn_mask, dropout_p);
  if (why != nullptr) *why = reason;
  return reason.empty();
}

SDPBackend select_sdp_backend(const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& attn_mask,
                              double dropout_p, bool is_causal) {
  const bool math = sdp_backend_enabled(SDPBackend::Math);
  std::string why;
  const bool flash = can_use_flash_attention(query, key, value, attn_mask, dropout_p, is_causal, &why);
  // Under EMBER_KERNELS=reference the composite is the default; the fused op only when forced.
  if (flash && (kernel_mode() == KernelMode::Fast || !math)) return SDPBackend::FlashAttention;
  if (math) return SDPBackend::Math;
  throw Error("No available kernel.  Aborting execution. Flash attention kernel not used because: " + why);
}

Tensor functional::scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                                const Tensor& attn_mask, double dropout_p, bool is_causal,
                                                std::optional<double> scale) {
  if (autocast::active()) {  // autograd/autocast.h: a lower-precision op (a float mask too)
    const autocast::SuspendGuard cast_once;
    return functional::scaled_dot_product_attention(
        autocast::to_lower_precision(query), autocast::to_lower_precision(key), autocast::to_lower_precision(value),
        autocast::to_lower_precision(attn_mask), dropout_p, is_causal, scale);
  }
  check_attention_inputs(query, key, value, attn_mask, is_causal);
  // PyTorch (2.15) runs three 3-D inputs [N, L, E] as one batch of N heads, [1, N, L, E], so
  // that they reach the fused kernel too; the output's grad_fn is then SqueezeBackward1.
  if (query.dim() == 3 && key.dim() == 3 && value.dim() == 3) {
    return ember::squeeze(functional::scaled_dot_product_attention(ember::unsqueeze(query, 0), ember::unsqueeze(key, 0),
                                                                   ember::unsqueeze(value, 0), attn_mask, dropout_p,
                                                                   is_causal, scale),
                          0);
  }
  if (select_sdp_backend(query, key, value, attn_mask, dropout_p, is_causal) == SDPBackend::FlashAttention)
    return std::get<0>(ember::scaled_dot_product_flash_attention(query, key, value, is_causal, scale));
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
