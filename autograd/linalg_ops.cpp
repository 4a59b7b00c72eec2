// autograd/linalg_ops.cpp — differentiable matrix products: mm, bmm, addmm, matmul.
//
// Tutorial §2.4 (matmul, @) and §5 (nn.Linear is addmm). For C = A B:
//   dA = dC Bᵀ      dB = Aᵀ dC
// the two rules every formula here is made of. matmul is composed from unsqueeze, expand,
// reshape, mm, mv and bmm when recording, exactly as PyTorch composes it, so its gradient
// (and second gradient) come from theirs and its grad_fn names are PyTorch's; without
// autograd it calls native::matmul directly.
#include <ember/autograd/autocast.h>
#include <ember/autograd/function.h>
#include <ember/autograd/ops.h>
#include <ember/core/native.h>
#include <ember/core/profiler.h>

#include <optional>

namespace ember {

using autograd::needs_grad;
using autograd::Node;
using autograd::record;
using autograd::TensorList;

namespace {

// A matrix stored column by column: the transpose of a contiguous one (nn::Linear's Wᵀ).
bool is_transposed_contiguous(const Tensor& m) { return m.stride(0) == 1 && m.stride(1) == m.size(0); }

// The two rules, each computed so that the gradient comes out in its operand's layout, as
// PyTorch's mm_mat1_backward / mm_mat2_backward do. nn::Linear multiplies by Wᵀ: its
// gradient computed as (dCᵀ A)ᵀ is, after TBackward, contiguous like W itself, so
// AccumulateGrad can keep it as W.grad instead of copying it (accumulate_grad.cpp). The
// product is the same either way (the same sums, in the same order).
//
// Recording (create_graph) composes them from t and mm, whose formulas give the second
// gradient. Otherwise a transpose is only a matter of strides, and native::mm_transposed
// takes it as one: no transposed views to make and free (three per nn::Linear in a
// training step's backward), the same product. Under the profiler it shows as the mm it is,
// with the shapes of the transposes.
bool by_strides() { return !is_grad_enabled() && !autocast::active(); }

Tensor product_of_transposes(const Tensor& a, bool transpose_a, const Tensor& b, bool transpose_b,
                             bool transposed_result) {
  std::optional<Tensor> shown_a, shown_b;  // the operands as the profiler lists them
  if (profiler::is_enabled()) [[unlikely]] {
    shown_a = transpose_a ? native::t(a) : a;
    shown_b = transpose_b ? native::t(b) : b;
  }
  EMBER_RECORD_FUNCTION("mm", shown_a, shown_b);
  return native::mm_transposed(a, transpose_a, b, transpose_b, transposed_result);
}

Tensor mat1_gradient(const Tensor& g, const Tensor& a, const Tensor& b) {  // g bᵀ
  if (by_strides()) return product_of_transposes(g, false, b, true, is_transposed_contiguous(a));
  if (is_transposed_contiguous(a)) return ember::t(ember::mm(b, ember::t(g)));
  return ember::mm(g, ember::t(b));
}

Tensor mat2_gradient(const Tensor& g, const Tensor& a, const Tensor& b) {  // aᵀ g
  if (by_strides()) return product_of_transposes(a, true, g, false, is_transposed_contiguous(b));
  if (is_transposed_contiguous(b)) return ember::t(ember::mm(ember::t(g), a));
  return ember::mm(ember::t(a), g);
}

}  // namespace

Tensor mm(const Tensor& a, const Tensor& b) {
  if (autocast::active()) {  // autograd/autocast.h: a lower-precision op
    const autocast::SuspendGuard cast_once;
    return ember::mm(autocast::to_lower_precision(a), autocast::to_lower_precision(b));
  }
  EMBER_RECORD_FUNCTION("mm", a, b);
  Tensor out = native::mm(a, b);
  if (needs_grad(a, b)) {
    auto node = record("MmBackward0", {a, b}, out);
    node->save("self", a);
    node->save("mat2", b);
    node->set_backward([](Node& n, const TensorList& grads) -> TensorList {
      const Tensor& g = grads[0];
      Tensor a = n.saved(0), b = n.saved(1);
      return {n.needs_input_grad(0) ? mat1_gradient(g, a, b) : Tensor(),
              n.needs_input_grad(1) ? mat2_gradient(g, a, b) : Tensor()};
    });
  }
  return out;
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  if (autocast::active()) {
    const autocast::SuspendGuard cast_once;
    return ember::bmm(autocast::to_lower_precision(a), autocast::to_lower_precision(b));
  }
  EMBER_RECORD_FUNCTION("bmm", a, b);
  Tensor out = native::bmm(a, b);
  if (needs_grad(a, b)) {
    auto node = record("BmmBackward0", {a, b}, out);
    node->save("self", a);
    node->save("mat2", b);
    node->set_backward([](Node& n, const TensorList& grads) -> TensorList {
      const Tensor& g = grads[0];
      Tensor a = n.saved(0), b = n.saved(1);
      return {n.needs_input_grad(0) ? ember::bmm(g, ember::transpose(b, 1, 2)) : Tensor(),
              n.needs_input_grad(1) ? ember::bmm(ember::transpose(a, 1, 2), g) : Tensor()};
    });
  }
  return out;
}

Tensor addmm(const Tensor& bias, const Tensor& a, const Tensor& b, Scalar beta, Scalar alpha) {
  if (autocast::active()) {
    const autocast::SuspendGuard cast_once;
    return ember::addmm(autocast::to_lower_precision(bias), autocast::to_lower_precision(a),
                        autocast::to_lower_precision(b), beta, alpha);
  }
  EMBER_RECORD_FUNCTION("addmm", bias, a, b);
  Tensor out = native::addmm(bias, a, b, beta, alpha);
  if (needs_grad(bias, a, b)) {
    // out = beta * bias + alpha * a @ b; bias was broadcast to [n, m]. Its gradient is
    // beta * g, which the engine sums down to the bias's shape (validate_gradient, as
    // PyTorch's validate_outputs does for this formula).
    auto node = record("AddmmBackward0", {bias, a, b}, out);
    node->save("mat1", a);
    node->save("mat2", b);
    double beta_value = beta.to_double(), alpha_value = alpha.to_double();
    node->set_backward([beta_value, alpha_value](Node& n, const TensorList& grads) -> TensorList {
      const Tensor& g = grads[0];
      Tensor a = n.saved(0), b = n.saved(1);
      auto scaled = [](const Tensor& t, double factor) { return factor == 1.0 ? t : t * factor; };
      return {n.needs_input_grad(0) ? scaled(g, beta_value) : Tensor(),
              n.needs_input_grad(1) ? scaled(mat1_gradient(g, a, b), alpha_value) : Tensor(),
              n.needs_input_grad(2) ? scaled(mat2_gradient(g, a, b), alpha_value) : Tensor()};
    });
  }
  return out;
}

namespace {

// [1, m] -> [m], recorded as PyTorch's in-place squeeze_(0) (SqueezeBackward4; 1.13 named it
// SqueezeBackward3). Not marked a view: the squeezed tensor *is* the mm result in PyTorch,
// so in-place ops on matmul's output stay allowed; nothing saved the mm result, so writing
// it is safe.
Tensor squeeze_row_in_place(const Tensor& row) {
  Tensor out = native::squeeze(row, 0);
  if (needs_grad(row)) {
    auto node = record("SqueezeBackward4", {row}, out);
    node->set_backward([](Node&, const TensorList& grads) -> TensorList { return {ember::unsqueeze(grads[0], 0)}; });
  }
  return out;
}

// matmul of two operands, each at least 2-D, one with batch dims (which broadcast). When
// the broadcast batch dims of either operand cannot be viewed as one (a permuted view such
// as attention's x.view(B, T, H, D).transpose(1, 2), or a broadcast dim beside a real one),
// PyTorch's reshape would copy it; native::matmul reads it in place instead, and one node
// records both rules over the broadcast batch (summed back to each operand's shape). Its
// name is the node PyTorch's matmul ends in.
Tensor batched_product(const Tensor& a, const Tensor& b) {
  if (!native::matmul_batch_is_one_stride(a, b)) {
    Tensor out = native::matmul(a, b);
    auto node = record("UnsafeViewBackward0", {a, b}, out);
    node->save("self", a);
    node->save("other", b);
    node->set_backward([](Node& n, const TensorList& grads) -> TensorList {
      const Tensor& g = grads[0];
      Tensor a = n.saved(0), b = n.saved(1);
      return {n.needs_input_grad(0) ? ember::sum_to(ember::matmul(g, ember::transpose(b, -2, -1)), a.sizes()) : Tensor(),
              n.needs_input_grad(1) ? ember::sum_to(ember::matmul(ember::transpose(a, -2, -1), g), b.sizes()) : Tensor()};
    });
    return out;
  }
  // Otherwise broadcast the batch dims, view them as one, and run one bmm.
  Shape left_batch(a.sizes().begin(), a.sizes().end() - 2);
  Shape right_batch(b.sizes().begin(), b.sizes().end() - 2);
  Shape batch = broadcast_shapes(left_batch, right_batch);
  std::int64_t n = a.size(-2), k = a.size(-1), k2 = b.size(-2), m = b.size(-1);
  EMBER_CHECK(k == k2, ShapeError, "Expected size for first two dimensions of batch2 tensor to be: [",
              compute_numel(batch), ", ", k, "] but got: [", compute_numel(batch), ", ", k2, "].");
  Shape left_full = batch, right_full = batch;
  left_full.insert(left_full.end(), {n, k});
  right_full.insert(right_full.end(), {k2, m});
  std::int64_t flat = compute_numel(batch);
  Tensor left3 = ember::reshape(ember::expand(a, left_full), {flat, n, k});
  Tensor right3 = ember::reshape(ember::expand(b, right_full), {flat, k2, m});
  Shape out_sizes = batch;
  out_sizes.insert(out_sizes.end(), {n, m});
  return ember::unsafe_view(ember::bmm(left3, right3), out_sizes);
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  if (autocast::active()) {
    const autocast::SuspendGuard cast_once;
    return ember::matmul(autocast::to_lower_precision(a), autocast::to_lower_precision(b));
  }
  EMBER_RECORD_FUNCTION("matmul", a, b);
  if (!needs_grad(a, b)) return native::matmul(a, b);
  EMBER_CHECK(a.dim() > 0 && b.dim() > 0, ShapeError, "both arguments to matmul need to be at least 1D, but they are ",
              a.dim(), "D and ", b.dim(), "D");
  // torch.matmul's rules, written with differentiable ops and recorded as the same nodes
  // PyTorch 2.x records (so grad_fn names match): vector·vector is DotBackward0,
  // matrix·vector MvBackward0, vector·matrix ends in SqueezeBackward4, matrix·matrix is
  // MmBackward0, and anything with batch dims ends in UnsafeViewBackward0 (a fold into one
  // mm/mv, or one bmm over the broadcast batch) — CloneBackward0 for a matrix that requires
  // grad @ a batch (folded, then transposed back and copied).
  if (a.dim() == 1 && b.dim() == 1) {
    // The dot product: d(a·b)/da = b, d(a·b)/db = a, scaled by the 0-d gradient.
    Tensor out = native::matmul(a, b);
    auto node = record("DotBackward0", {a, b}, out);
    node->save("self", a);
    node->save("tensor", b);
    node->set_backward([](Node& n, const TensorList& grads) -> TensorList {
      Tensor self = n.saved(0), other = n.saved(1);
      return {n.needs_input_grad(0) ? grads[0] * other : Tensor(), n.needs_input_grad(1) ? grads[0] * self : Tensor()};
    });
    return out;
  }
  if (a.dim() == 2 && b.dim() == 1) {
    // Matrix times vector: dA = g vᵀ (an outer product), dv = Aᵀ g.
    Tensor out = native::matmul(a, b);
    auto node = record("MvBackward0", {a, b}, out);
    node->save("self", a);
    node->save("vec", b);
    node->set_backward([](Node& n, const TensorList& grads) -> TensorList {
      const Tensor& g = grads[0];
      Tensor matrix = n.saved(0), vector = n.saved(1);
      return {n.needs_input_grad(0) ? ember::mm(ember::unsqueeze(g, 1), ember::unsqueeze(vector, 0)) : Tensor(),
              n.needs_input_grad(1) ? ember::matmul(ember::t(matrix), g) : Tensor()};
    });
    return out;
  }
  if (a.dim() == 1 && b.dim() == 2) {
    // A row vector times a matrix: [1, k] @ [k, m], then the row dim is dropped (PyTorch
    // squeezes in place, so the last node is SqueezeBackward4).
    return squeeze_row_in_place(ember::mm(ember::unsqueeze(a, 0), b));
  }
  if (a.dim() == 2 && b.dim() == 2) return ember::mm(a, b);
  if (native::matmul_should_fold(a, b)) {
    // One operand has batch dims, the other is a matrix or a vector: fold the batch dims
    // into the rows of a single mm (or mv). [B..., n, k] @ [k, m] is [B... * n, k] @ [k, m]
    // seen as [B..., n, m]. When the batched operand is on the right, (A B)ᵀ = Bᵀ Aᵀ turns
    // it into the left one, and the result is transposed back (and made contiguous).
    const bool transpose = b.dim() > a.dim();
    Tensor t1 = transpose ? ember::transpose(b, -2, -1) : a;
    Tensor t2 = transpose ? (a.dim() == 2 ? ember::t(a) : a) : b;
    Shape out_sizes(t1.sizes().begin(), t1.sizes().end() - 1);
    const std::int64_t rows = compute_numel(out_sizes);  // not -1: [3, 5, 0] @ [0, 0] has k = 0
    Tensor folded = ember::reshape(t1, {rows, t1.size(-1)});
    if (t2.dim() == 1) return ember::unsafe_view(ember::matmul(folded, t2), out_sizes);  // MvBackward0
    out_sizes.push_back(t2.size(1));
    Tensor out = ember::unsafe_view(ember::mm(folded, t2), out_sizes);
    return transpose ? ember::contiguous(ember::transpose(out, -2, -1)) : out;
  }
  // Otherwise one bmm over the broadcast batch. A vector operand joins it as a matrix ([k] is
  // [1, k] on the left, [k, 1] on the right) whose dim the result then drops, as PyTorch's
  // bmm path does (vector @ batch, or a batch that does not fold @ vector).
  if (a.dim() > 1 && b.dim() > 1) return batched_product(a, b);
  Tensor product =
      batched_product(a.dim() == 1 ? ember::unsqueeze(a, 0) : a, b.dim() == 1 ? ember::unsqueeze(b, 1) : b);
  Shape out_sizes = product.sizes();
  if (b.dim() == 1) out_sizes.erase(out_sizes.end() - 1);
  if (a.dim() == 1) out_sizes.erase(out_sizes.end() - (b.dim() == 1 ? 1 : 2));
  return ember::unsafe_view(product, out_sizes);
}

}  // namespace ember
