// core/flash_attention.cpp — native::flash_attention and native::flash_attention_backward
// (core/flash_attention.h): the checks, the leading dims folded into (outer, inner), one
// kernel call. The kernels read every operand through its strides (core/flash_attention_plan.h).
#include <ember/core/flash_attention.h>

#include <limits>
#include <vector>

#include <ember/core/backend.h>
#include <ember/core/factories.h>
#include <ember/core/native.h>
#include <ember/core/profiler.h>

namespace ember::native {

namespace {

constexpr const char* kOp = "scaled_dot_product_flash_attention";

void check_inputs(const Tensor& query, const Tensor& key, const Tensor& value) {
  EMBER_CHECK(query.dtype() == key.dtype() && query.dtype() == value.dtype(), DTypeError, kOp,
              ": Expected query, key, and value to have the same dtype, but got query.dtype: ",
              c_type_name(query.dtype()), " key.dtype: ", c_type_name(key.dtype()),
              " and value.dtype: ", c_type_name(value.dtype()), " instead.");
  EMBER_CHECK(is_floating_point(query.dtype()), DTypeError, kOp,
              ": Expected data type in FP32, FP64, BF16, FP16, but got ", scalar_type_name(query.dtype()), " instead.");
  check_same_device(query, key);
  check_same_device(query, value);
  EMBER_CHECK(query.dim() >= 2 && key.dim() == query.dim() && value.dim() == query.dim(), ShapeError, kOp,
              ": Expected query, key and value to have the same number of dims, at least 2, but got query.dim: ",
              query.dim(), " key.dim: ", key.dim(), " and value.dim: ", value.dim(), " instead.");
  bool same_leading = true;
  for (std::int64_t d = 0; d + 2 < query.dim(); ++d)
    same_leading = same_leading && key.size(d) == query.size(d) && value.size(d) == query.size(d);
  EMBER_CHECK(same_leading, ShapeError, kOp,
              ": Expected query, key and value to have the same batch dims (no broadcasting), but got query: ",
              shape_to_string(query.sizes()), ", key: ", shape_to_string(key.sizes()),
              " and value: ", shape_to_string(value.sizes()), " instead.");
  EMBER_CHECK(key.size(-1) == query.size(-1), ShapeError, kOp,
              ": Expected key's last dim to be query's (", query.size(-1), "), but got ", key.size(-1));
  EMBER_CHECK(value.size(-2) == key.size(-2), ShapeError, kOp,
              ": Expected value to have as many rows as key (", key.size(-2), "), but got ", value.size(-2));
}

// The kernels step along the last dim with stride 1; an operand strided there is copied.
Tensor unit_last_stride(const Tensor& tensor) {
  return tensor.size(-1) <= 1 || tensor.stride(-1) == 1 ? tensor : contiguous(tensor);
}

// Folds the leading dims (all but the last two, the same sizes in every operand) into at
// most two, (outer, inner), with one stride pair per operand: adjacent dims merge when every
// operand can step over both with one stride, and size-1 dims drop out. A transformer's
// [B, H, ...] heads of a packed projection stay two dims. False when more than two remain.
bool fold_leading_dims(const std::vector<const Tensor*>& operands, AttentionShape& shape,
                       std::vector<AttentionStrides>& strides) {
  const Tensor& first = *operands.front();
  struct Group {
    std::int64_t size, innermost;  // the group's element count and its innermost dim
  };
  std::vector<Group> groups;
  for (std::int64_t d = 0; d + 2 < first.dim(); ++d) {
    if (first.size(d) == 1) continue;
    if (!groups.empty()) {
      bool merges = true;
      for (const Tensor* op : operands) merges = merges && op->stride(groups.back().innermost) == op->stride(d) * op->size(d);
      if (merges) {
        groups.back().size *= first.size(d);
        groups.back().innermost = d;
        continue;
      }
    }
    groups.push_back({first.size(d), d});
  }
  if (groups.size() > 2) return false;
  shape.outer = groups.size() == 2 ? groups.front().size : 1;
  shape.inner = groups.empty() ? 1 : groups.back().size;
  strides.clear();
  for (const Tensor* op : operands) {
    AttentionStrides s;
    if (groups.size() == 2) s.outer = op->stride(groups.front().innermost);
    if (!groups.empty()) s.inner = op->stride(groups.back().innermost);
    s.row = op->stride(-2);
    strides.push_back(s);
  }
  return true;
}

// The (query, key) pairs attention computes: all of them, or under PyTorch's top-left causal
// mask those with key <= query.
double attended_pairs(std::int64_t batch, std::int64_t queries, std::int64_t keys, bool is_causal) {
  if (!is_causal) return static_cast<double>(batch) * static_cast<double>(queries) * static_cast<double>(keys);
  const std::int64_t full_rows = std::max<std::int64_t>(0, queries - keys);  // rows that see every key
  const std::int64_t partial = std::min(queries, keys);                        // row i sees i + 1 keys
  return static_cast<double>(batch) *
         (static_cast<double>(partial) * static_cast<double>(partial + 1) / 2.0 +
          static_cast<double>(full_rows) * static_cast<double>(keys));
}

std::int64_t batch_entries(const Tensor& query) {
  std::int64_t count = 1;
  for (std::int64_t d = 0; d + 2 < query.dim(); ++d) count *= query.size(d);
  return count;
}

Shape with_last_two(const Tensor& like, std::int64_t rows, std::int64_t cols) {
  Shape sizes(like.sizes().begin(), like.sizes().end());
  sizes[sizes.size() - 2] = rows;
  sizes[sizes.size() - 1] = cols;
  return sizes;
}

}  // namespace

FlashAttentionResult flash_attention(const Tensor& query_in, const Tensor& key_in, const Tensor& value_in,
                                     bool is_causal, double scale) {
  check_inputs(query_in, key_in, value_in);
  if (is_reduced_floating_point(query_in.dtype())) {
    // bfloat16/float16: the float32 kernel on widened inputs; the output rounded once, the
    // logsumexp kept in float32 (as PyTorch keeps it for 16-bit inputs).
    FlashAttentionResult wide = flash_attention(widened(query_in), widened(key_in), widened(value_in), is_causal, scale);
    wide.output = to_dtype(wide.output, query_in.dtype());
    return wide;
  }
  const std::int64_t queries = query_in.size(-2), keys = key_in.size(-2), value_dim = value_in.size(-1);
  FlashAttentionResult result;
  if (query_in.dim() == 4 && query_in.stride(1) < query_in.stride(2)) {
    // q's heads interleaved in memory ([B, L, H, E], a transformer's x.view(B, T, H, D)
    // .transpose(1, 2)): the output is laid out the same way, as PyTorch's is, so that
    // out.transpose(1, 2).reshape(B, L, H·Ev) is a view.
    result.output = transpose(empty({query_in.size(0), queries, query_in.size(1), value_dim}, query_in.options()), 1, 2);
  } else {
    result.output = empty(with_last_two(query_in, queries, value_dim), query_in.options());
  }
  Shape lse_sizes(query_in.sizes().begin(), query_in.sizes().end() - 1);
  result.logsumexp = empty(lse_sizes, query_in.options());
  if (batch_entries(query_in) == 0 || queries == 0) return result;
  if (keys == 0) {  // no key to attend to: PyTorch's math path gives 0 (and log Σ∅ = -inf)
    fill_(result.output, 0);
    fill_(result.logsumexp, -std::numeric_limits<double>::infinity());
    return result;
  }
  Tensor query = unit_last_stride(query_in), key = unit_last_stride(key_in), value = unit_last_stride(value_in);
  FlashAttentionPlan plan;
  std::vector<AttentionStrides> strides;
  if (!fold_leading_dims({&query, &key, &value, &result.output}, plan.shape, strides)) {
    query = contiguous(query);
    key = contiguous(key);
    value = contiguous(value);
    result.output = contiguous(result.output);  // more than 4-D: allocated contiguous already
    fold_leading_dims({&query, &key, &value, &result.output}, plan.shape, strides);
  }
  plan.shape.query_len = queries;
  plan.shape.key_len = keys;
  plan.shape.head_dim = query.size(-1);
  plan.shape.value_dim = value_dim;
  plan.query = query.data_ptr();
  plan.key = key.data_ptr();
  plan.value = value.data_ptr();
  plan.output = result.output.data_ptr();
  plan.logsumexp = result.logsumexp.data_ptr();
  plan.query_strides = strides[0];
  plan.key_strides = strides[1];
  plan.value_strides = strides[2];
  plan.output_strides = strides[3];
  plan.is_causal = is_causal;
  plan.scale = scale;
  plan.dtype = query.dtype();
  plan.device = query.device().index();
  // S = QKᵀ and O = PV over the pairs attended.
  profiler::add_flops(2.0 * attended_pairs(batch_entries(query_in), queries, keys, is_causal) *
                      static_cast<double>(plan.shape.head_dim + plan.shape.value_dim));
  flash_attention_kernel(query.device(), plan);
  return result;
}

FlashAttentionGradients flash_attention_backward(const Tensor& grad_output_in, const Tensor& query_in,
                                                 const Tensor& key_in, const Tensor& value_in,
                                                 const Tensor& output_in, const Tensor& logsumexp_in, bool is_causal,
                                                 double scale) {
  check_inputs(query_in, key_in, value_in);
  if (is_reduced_floating_point(query_in.dtype())) {  // as the forward: in float32, rounded once
    FlashAttentionGradients wide =
        flash_attention_backward(widened(grad_output_in), widened(query_in), widened(key_in), widened(value_in),
                                 widened(output_in), widened(logsumexp_in), is_causal, scale);
    for (Tensor* gradient : {&wide.grad_query, &wide.grad_key, &wide.grad_value})
      *gradient = to_dtype(*gradient, query_in.dtype());
    return wide;
  }
  const Shape output_sizes = with_last_two(query_in, query_in.size(-2), value_in.size(-1));
  for (const Tensor* t : {&grad_output_in, &output_in}) {
    check_same_device(query_in, *t);
    EMBER_CHECK(IntArrayRef(t->sizes()) == IntArrayRef(output_sizes), ShapeError, kOp,
                "_backward: expected grad_out and out of shape ", shape_to_string(output_sizes), ", got ",
                shape_to_string(t->sizes()));
  }
  const std::int64_t batch = batch_entries(query_in), queries = query_in.size(-2), keys = key_in.size(-2);
  EMBER_CHECK(logsumexp_in.numel() == batch * queries, ShapeError, kOp, "_backward: logsumexp needs ",
              batch * queries, " elements (one per query row), got ", logsumexp_in.numel());
  FlashAttentionGradients grads;
  grads.grad_query = empty(query_in.sizes(), query_in.options());
  grads.grad_key = empty(key_in.sizes(), key_in.options());
  grads.grad_value = empty(value_in.sizes(), value_in.options());
  if (batch == 0 || queries == 0 || keys == 0) {  // nothing attended: every gradient is zero
    for (Tensor* g : {&grads.grad_query, &grads.grad_key, &grads.grad_value}) fill_(*g, 0);
    return grads;
  }
  const DType dtype = query_in.dtype();
  Tensor grad_output = unit_last_stride(to_dtype(grad_output_in, dtype));
  Tensor query = unit_last_stride(query_in), key = unit_last_stride(key_in), value = unit_last_stride(value_in);
  Tensor output = unit_last_stride(to_dtype(output_in, dtype));
  Tensor logsumexp = contiguous(to_dtype(logsumexp_in, dtype));
  Tensor delta = empty({batch * queries}, query_in.options());
  FlashAttentionBackwardPlan plan;
  std::vector<AttentionStrides> strides;
  auto fold = [&] {
    return fold_leading_dims({&grad_output, &query, &key, &value, &output, &grads.grad_query, &grads.grad_key,
                              &grads.grad_value},
                             plan.shape, strides);
  };
  if (!fold()) {
    for (Tensor* t : {&grad_output, &query, &key, &value, &output}) *t = contiguous(*t);
    fold();
  }
  plan.shape.query_len = queries;
  plan.shape.key_len = keys;
  plan.shape.head_dim = query.size(-1);
  plan.shape.value_dim = value.size(-1);
  plan.grad_output = grad_output.data_ptr();
  plan.query = query.data_ptr();
  plan.key = key.data_ptr();
  plan.value = value.data_ptr();
  plan.output = output.data_ptr();
  plan.logsumexp = logsumexp.data_ptr();
  plan.delta = delta.data_ptr();
  plan.grad_query = grads.grad_query.data_ptr();
  plan.grad_key = grads.grad_key.data_ptr();
  plan.grad_value = grads.grad_value.data_ptr();
  plan.grad_output_strides = strides[0];
  plan.query_strides = strides[1];
  plan.key_strides = strides[2];
  plan.value_strides = strides[3];
  plan.output_strides = strides[4];
  plan.grad_query_strides = strides[5];
  plan.grad_key_strides = strides[6];
  plan.grad_value_strides = strides[7];
  plan.is_causal = is_causal;
  plan.scale = scale;
  plan.dtype = dtype;
  plan.device = query.device().index();
  // S recomputed (QKᵀ), dV = PᵀdO, dP = dO Vᵀ, dQ = dS K, dK = dSᵀQ.
  profiler::add_flops(2.0 * attended_pairs(batch, queries, keys, is_causal) *
                      static_cast<double>(3 * plan.shape.head_dim + 2 * plan.shape.value_dim));
  flash_attention_backward_kernel(query.device(), plan);
  return grads;
}

}  // namespace ember::native
