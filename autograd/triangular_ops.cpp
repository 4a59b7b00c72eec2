// autograd/triangular_ops.cpp — tril and triu: the lower / upper triangle of the last two dims.
//
// torch.tril(x, diagonal) keeps x[..., i, j] where j <= i + diagonal and zeroes the rest;
// torch.triu keeps j >= i + diagonal. scaled_dot_product_attention's is_causal mask is
// triu(ones(L, S), 1): the positions a query may not see (nn/attention.cpp).
//
// Strategy: no kernel of its own. The [rows, cols] "outside the triangle" mask comes from an
// iota comparison (arange(cols) against arange(diagonal, rows + diagonal)[:, None]), and masked_fill
// zeroes those positions, broadcasting the mask over the leading dims. Both ops exist on
// every backend (fast CPU loops, the reference loops, CUDA), so tril/triu do too. The
// gradient is the same triangle of the incoming gradient (TrilBackward0 / TriuBackward0).
#include <algorithm>

#include <ember/autograd/function.h>
#include <ember/autograd/ops.h>
#include <ember/core/factories.h>
#include <ember/core/native.h>
#include <ember/core/profiler.h>

namespace ember {

using autograd::needs_grad;
using autograd::Node;
using autograd::record;
using autograd::TensorList;

namespace {

// True at [i, j] where the triangle does not reach: j > i + diagonal for the lower one,
// j < i + diagonal for the upper one.
Tensor outside_triangle(const Tensor& self, std::int64_t diagonal, bool lower) {
  const std::int64_t rows = self.size(-2), cols = self.size(-1);
  // Any diagonal beyond [-rows, cols] selects the same triangle as that bound; clamping
  // keeps i + diagonal from overflowing for extreme values (PyTorch accepts any int64).
  diagonal = std::clamp(diagonal, -rows, cols);
  const TensorOptions index_options = TensorOptions().dtype(DType::Int64).device(self.device());
  Tensor column = arange(cols, index_options);
  Tensor shifted_row = native::unsqueeze(arange(Scalar(diagonal), Scalar(diagonal + rows), 1, index_options), 1);
  return lower ? native::gt(column, shifted_row) : native::lt(column, shifted_row);
}

Tensor triangle(const Tensor& self, std::int64_t diagonal, bool lower) {
  const char* name = lower ? "tril" : "triu";
  EMBER_CHECK(self.dim() >= 2, ShapeError, name, ": input tensor must have at least 2 dimensions");
  Tensor out = native::masked_fill(self, outside_triangle(self, diagonal, lower), Scalar(0));
  if (needs_grad(self)) {
    auto node = record(lower ? "TrilBackward0" : "TriuBackward0", {self}, out);
    node->set_backward([diagonal, lower](Node&, const TensorList& grads) -> TensorList {
      return {lower ? ember::tril(grads[0], diagonal) : ember::triu(grads[0], diagonal)};
    });
  }
  return out;
}

}  // namespace

Tensor tril(const Tensor& self, std::int64_t diagonal) {
  EMBER_RECORD_FUNCTION("tril", self);
  return triangle(self, diagonal, true);
}
Tensor triu(const Tensor& self, std::int64_t diagonal) {
  EMBER_RECORD_FUNCTION("triu", self);
  return triangle(self, diagonal, false);
}

}  // namespace ember
