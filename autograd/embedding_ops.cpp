// autograd/embedding_ops.cpp — differentiable embedding (EmbeddingBackward0) and its weight
// gradient (EmbeddingDenseBackward0), PyTorch's node names.
//
// Issue 21. out = weight[indices] (core/embedding.h: a gather of rows). The gradient w.r.t.
// weight sends every position's gradient row back to the row it read,
//   d weight = embedding_backward(d out, indices, num_weights, padding_idx)
// (core/embedding_plan.h: summed per row in input order on every backend, padding row zero);
// indices get none (integers). embedding_backward is linear in its gradient, and its adjoint
// is the gather again with the padding positions zeroed,
//   d grad = embedding(gg, indices), 0 where indices == padding_idx
// so each op's backward is the other and double backward (create_graph) needs no formula of
// its own — as PyTorch's embedding_dense_double_backward.
#include <ember/autograd/function.h>
#include <ember/autograd/ops.h>
#include <ember/core/embedding.h>
#include <ember/core/factories.h>
#include <ember/core/native.h>
#include <ember/core/profiler.h>

namespace ember {

using autograd::needs_grad;
using autograd::Node;
using autograd::record;
using autograd::TensorList;

Tensor embedding(const Tensor& weight, const Tensor& indices, std::int64_t padding_idx) {
  EMBER_RECORD_FUNCTION("embedding", weight, indices);
  Tensor out = native::embedding(weight, indices);
  if (needs_grad(weight)) {
    auto node = record("EmbeddingBackward0", {weight}, out);
    node->save("indices", indices);
    const std::int64_t num_weights = weight.size(0);
    node->set_backward([num_weights, padding_idx](Node& n, const TensorList& grads) -> TensorList {
      return {ember::embedding_backward(grads[0], n.saved(0), num_weights, padding_idx)};
    });
  }
  return out;
}

Tensor embedding_backward(const Tensor& grad, const Tensor& indices, std::int64_t num_weights,
                          std::int64_t padding_idx) {
  EMBER_RECORD_FUNCTION("embedding_backward", grad, indices);
  Tensor out = native::embedding_backward(grad, indices, num_weights, padding_idx);
  if (needs_grad(grad)) {
    auto node = record("EmbeddingDenseBackward0", {grad}, out);
    node->save("indices", indices);
    node->set_backward([num_weights, padding_idx](Node& n, const TensorList& grads) -> TensorList {
      const Tensor& indices = n.saved(0);
      Tensor gathered = ember::embedding(grads[0], indices);
      if (padding_idx < 0 || padding_idx >= num_weights) return {gathered};
      // Positions that read the padding row sent it nothing: their gradient is zero.
      Tensor padding = full({}, padding_idx, indices.options());
      return {ember::masked_fill(gathered, ember::unsqueeze(ember::eq(indices, padding), -1), 0)};
    });
  }
  return out;
}

}  // namespace ember
