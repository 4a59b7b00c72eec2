// autograd/linalg_ops.cpp — differentiable matrix products: mm, bmm, addmm, matmul.
//
// Tutorial §2.4 (matmul, @) and §5 (nn.Linear is addmm). For C = A B:
//   dA = dC Bᵀ      dB = Aᵀ dC
// the two rules every formula here is made of. matmul is composed from unsqueeze, expand,
// reshape, mm and bmm when recording, so its gradient (and second gradient) come from
// theirs (vector·vector and matrix·vector have their own nodes, DotBackward0 and
// MvBackward0, as in PyTorch); without autograd it calls native::matmul directly.
#include <ember/autograd/function.h>
#include <ember/autograd/ops.h>
#include <ember/core/native.h>

namespace ember {

using autograd::needs_grad;
using autograd::Node;
using autograd::record;
using autograd::TensorList;

Tensor mm(const Tensor& a, const Tensor& b) {
  Tensor out = native::mm(a, b);
  if (needs_grad(a, b)) {
    auto node = record("MmBackward0", {a, b}, out);
    node->save("self", a);
    node->save("mat2", b);
    node->set_backward([](Node& n, const TensorList& grads) -> TensorList {
      const Tensor& g = grads[0];
      Tensor a = n.saved(0), b = n.saved(1);
      return {n.needs_input_grad(0) ? ember::mm(g, ember::t(b)) : Tensor(),
              n.needs_input_grad(1) ? ember::mm(ember::t(a), g) : Tensor()};
    });
  }
  return out;
}

Tensor bmm(const Tensor& a, const Tensor& b) {
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
  Tensor out = native::addmm(bias, a, b, beta, alpha);
  if (needs_grad(bias, a, b)) {
    // out = beta * bias + alpha * a @ b; bias was broadcast to [n, m].
    auto node = record("AddmmBackward0", {bias, a, b}, out);
    node->save("mat1", a);
    node->save("mat2", b);
    Shape bias_sizes = bias.sizes();
    double beta_value = beta.to_double(), alpha_value = alpha.to_double();
    node->set_backward([bias_sizes, beta_value, alpha_value](Node& n, const TensorList& grads) -> TensorList {
      const Tensor& g = grads[0];
      Tensor a = n.saved(0), b = n.saved(1);
      auto scaled = [](const Tensor& t, double factor) { return factor == 1.0 ? t : t * factor; };
      return {n.needs_input_grad(0) ? sum_to(scaled(g, beta_value), bias_sizes) : Tensor(),
              n.needs_input_grad(1) ? scaled(ember::mm(g, ember::t(b)), alpha_value) : Tensor(),
              n.needs_input_grad(2) ? scaled(ember::mm(ember::t(a), g), alpha_value) : Tensor()};
    });
  }
  return out;
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  if (!needs_grad(a, b)) return native::matmul(a, b);
  EMBER_CHECK(a.dim() > 0 && b.dim() > 0, ShapeError, "both arguments to matmul need to be at least 1D, but they are ",
              a.dim(), "D and ", b.dim(), "D");
  // torch.matmul's rules, written with differentiable ops:
  //   a 1-D operand is made a matrix (a row for a, a column for b) and that dim is
  //   dropped again at the end; 2-D @ 2-D is mm; otherwise the batch dims broadcast and
  //   the product is one bmm over the flattened batch.
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
  Tensor left = a.dim() == 1 ? ember::unsqueeze(a, 0) : a;
  Tensor right = b.dim() == 1 ? ember::unsqueeze(b, 1) : b;
  Tensor product;
  if (left.dim() == 2 && right.dim() == 2) {
    product = ember::mm(left, right);
  } else {
    Shape left_batch(left.sizes().begin(), left.sizes().end() - 2);
    Shape right_batch(right.sizes().begin(), right.sizes().end() - 2);
    Shape batch = broadcast_shapes(left_batch, right_batch);
    std::int64_t n = left.size(-2), k = left.size(-1), k2 = right.size(-2), m = right.size(-1);
    EMBER_CHECK(k == k2, ShapeError, "Expected size for first two dimensions of batch2 tensor to be: [",
                compute_numel(batch), ", ", k, "] but got: [", compute_numel(batch), ", ", k2, "].");
    Shape left_full = batch, right_full = batch;
    left_full.insert(left_full.end(), {n, k});
    right_full.insert(right_full.end(), {k2, m});
    std::int64_t flat = compute_numel(batch);
    Tensor left3 = ember::reshape(ember::expand(left, left_full), {flat, n, k});
    Tensor right3 = ember::reshape(ember::expand(right, right_full), {flat, k2, m});
    Shape out_sizes = batch;
    out_sizes.insert(out_sizes.end(), {n, m});
    product = ember::reshape(ember::bmm(left3, right3), out_sizes);
  }
  if (a.dim() == 1) product = ember::squeeze(product, -2);
  if (b.dim() == 1) product = ember::squeeze(product, -1);
  return product;
}

}  // namespace ember
