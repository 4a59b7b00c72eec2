// autograd/pin_memory_op.cpp — Tensor::pin_memory(), the differentiable wrapper of
// native::pin_memory (core/pinned_memory.cpp).
//
// Tutorial appendix (GPU): pinned host memory makes host->device copies fast and
// asynchronous. As in PyTorch (derivatives.yaml: `_pin_memory: self: grad`), pinning is the
// identity for autograd, so a pinned copy of a tensor that requires grad stays in the graph.
#include <ember/autograd/function.h>
#include <ember/autograd/ops.h>
#include <ember/core/native.h>

namespace ember {

Tensor pin_memory(const Tensor& self) {
  Tensor out = native::pin_memory(self);
  if (out.is_same(self)) return self;
  if (autograd::needs_grad(self)) {
    auto node = autograd::record("PinMemoryBackward0", {self}, out);
    node->set_backward([](autograd::Node&, const autograd::TensorList& grads) -> autograd::TensorList {
      return {grads[0]};
    });
  }
  return out;
}

Tensor Tensor::pin_memory() const { return ember::pin_memory(*this); }

}  // namespace ember
