// autograd/topk_ops.cpp — ember::topk (autograd/ops.h): native::topk (core/topk.cpp) and its
// derivative.
//
// Issue 21. The values are elements of the input, so d value_j / d x = 1 at the index it
// came from and 0 elsewhere: the backward scatters the incoming gradient to the returned
// indices (PyTorch's TopkBackward0, value_selecting_reduction_backward). Indices along dim are
// distinct, so scatter_add into zeros is a plain scatter, and it is written with public ops,
// so the backward is differentiable again (double backward gathers the gradient back).
// The indices are integers and never require grad.
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

std::tuple<Tensor, Tensor> topk(const Tensor& self, std::int64_t k, std::int64_t dim, bool largest, bool sorted) {
  EMBER_RECORD_FUNCTION("topk", self);
  auto result = native::topk(self, k, dim, largest, sorted);
  if (!needs_grad(self)) return result;
  const auto& [values, indices] = result;
  const Shape sizes = self.sizes();
  const std::int64_t d = self.dim() == 0 ? 0 : wrap_dim(dim, self.dim());
  auto node = record("TopkBackward0", {self}, values);
  node->save("indices", indices);
  node->set_backward([sizes, d](Node& n, const TensorList& grads) -> TensorList {
    if (sizes.empty()) return {grads[0]};  // a 0-d input is its own (only) value
    return {ember::scatter_add(zeros(sizes, grads[0].options()), d, n.saved(0), grads[0])};
  });
  return result;
}

}  // namespace ember
