// autograd/tensor_autograd.cpp — the autograd methods of Tensor: backward(), retain_grad(),
// detach(), register_hook(), register_post_accumulate_grad_hook().
//
// Tutorial §4: loss.backward(); w1.grad. The work is the engine's (engine.h); these
// methods only check their arguments with PyTorch's messages and attach hooks.
#include <ember/autograd/accumulate_grad.h>
#include <ember/autograd/engine.h>
#include <ember/autograd/ops.h>
#include <ember/core/native.h>

namespace ember {

void Tensor::backward(const Tensor& gradient, bool retain_graph, bool create_graph) const {
  autograd::backward({*this}, {gradient}, retain_graph || create_graph, create_graph);
}

void Tensor::retain_grad() const {
  EMBER_CHECK(requires_grad(), AutogradError, "can't retain_grad on Tensor that has requires_grad=False");
  if (is_leaf() || retains_grad()) return;  // a leaf keeps its .grad anyway
  ensure_autograd_meta().retains_grad = true;
  auto node = std::static_pointer_cast<autograd::Node>(grad_fn());
  // A weak pointer: the hook lives in the node, and the node must not keep this tensor alive.
  std::weak_ptr<TensorImpl> weak_impl = impl_ptr();
  node->add_retain_grad_hook(output_nr(), [weak_impl](const Tensor& grad) -> Tensor {
    auto impl = weak_impl.lock();
    if (!impl) return Tensor();
    Tensor self(impl);
    Tensor& stored = self.mutable_grad();
    if (!stored.defined()) {
      stored = is_grad_enabled() ? grad : native::clone(grad);  // grad mode on = create_graph
    } else {
      stored = is_grad_enabled() ? ember::add(stored, grad) : native::add(stored, grad);
    }
    return Tensor();
  });
}

Tensor Tensor::detach() const { return native::alias(*this); }

Tensor& Tensor::detach_() {
  if (AutogradMeta* meta = autograd_meta()) {
    // A view's history is its base's: cutting it alone would leave the two inconsistent.
    EMBER_CHECK(!meta->is_view, AutogradError,
                "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel (DDP) "
                "for training, and gradient_as_bucket_view is set as True, gradients are views of DDP buckets, and "
                "hence detach_() cannot be called on these gradients. To fix this error, please refer to the "
                "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.");
    meta->grad_fn.reset();
    meta->output_nr = 0;
    meta->requires_grad = false;
  }
  return *this;
}

void Tensor::register_hook(TensorHook hook) const {
  EMBER_CHECK(requires_grad(), AutogradError, "cannot register a hook on a tensor that doesn't require gradient");
  if (is_leaf()) {
    ensure_autograd_meta().hooks.push_back(std::move(hook));  // run by the leaf's AccumulateGrad
  } else {
    std::static_pointer_cast<autograd::Node>(grad_fn())->add_pre_hook(output_nr(), std::move(hook));
  }
}

void Tensor::register_post_accumulate_grad_hook(PostAccumulateGradHook hook) const {
  EMBER_CHECK(requires_grad(), AutogradError, "cannot register a hook on a tensor that doesn't require gradient");
  EMBER_CHECK(is_leaf(), AutogradError, "post accumulate grad hooks cannot be registered on non-leaf tensors");
  ensure_autograd_meta().post_accumulate_hooks.push_back(std::move(hook));
}

}  // namespace ember
