// autograd/accumulate_grad.cpp — adding a gradient into a leaf's .grad().
#include <ember/autograd/accumulate_grad.h>

#include <ember/autograd/grad_mode.h>
#include <ember/autograd/ops.h>
#include <ember/core/native.h>

namespace ember::autograd {

AccumulateGrad::AccumulateGrad(Tensor leaf)
    : Node("AccumulateGrad", kAccumulateGradSequenceNr), leaf_(leaf.impl_ptr()) {
  add_gradient_slot(leaf);
}

namespace {

// True when `grad` (in the engine's gradient list) can become leaf.grad() without a copy.
bool can_steal(const Tensor& grad, const Tensor& leaf) {
  return grad.use_count() == 1 && grad.storage().use_count() == 1 && !grad.requires_grad() &&
         grad.is_contiguous() && leaf.is_contiguous() && grad.device() == leaf.device() &&
         grad.dtype() == leaf.dtype() && grad.sizes() == leaf.sizes();
}

}  // namespace

TensorList AccumulateGrad::apply(const TensorList& grad_outputs) {
  if (grad_outputs.empty() || !grad_outputs[0].defined()) return {};
  const Tensor& grad = grad_outputs[0];  // a reference: a copy would hide that nobody else holds it
  Tensor leaf = this->leaf();
  if (!leaf.defined()) return {};
  AutogradMeta& meta = leaf.ensure_autograd_meta();
  Tensor& stored = meta.grad;
  if (!stored.defined()) {
    // .grad() must be ours: the incoming gradient may be a view of someone else's data (an
    // expanded ones tensor, a user's gradient argument). When nobody else can see it — the
    // engine's list holds the only handle, no other tensor shares its memory, and it is laid
    // out like the leaf — it is taken as it is (PyTorch "steals" it the same way); anything
    // else gets a private copy. Stealing saves a copy of every weight gradient per step.
    // With create_graph (the engine runs formulas in grad mode then, as PyTorch's does) the
    // gradient keeps its graph: it can be differentiated again.
    const bool create_graph = is_grad_enabled();
    stored = create_graph || can_steal(grad, leaf) ? grad : native::clone(grad);
  } else if (is_grad_enabled()) {
    stored = ember::add(stored, grad);  // out of place: the old .grad may be in a graph
  } else {
    native::add_(stored, grad);
  }
  for (auto& hook : meta.post_accumulate_hooks) hook(leaf);
  return {};
}

void AccumulateGrad::run_pre_hooks(TensorList& grads) {
  Tensor leaf = this->leaf();
  if (!leaf.defined()) return;
  const AutogradMeta* meta = leaf.autograd_meta();
  if (meta == nullptr || grads.empty() || !grads[0].defined()) return;
  for (const TensorHook& hook : meta->hooks) {
    Tensor replacement = hook(grads[0]);
    if (!replacement.defined()) continue;
    check_hook_result(grads[0], replacement);
    grads[0] = replacement;
  }
}

std::shared_ptr<Node> grad_accumulator(const Tensor& leaf) {
  AutogradMeta& meta = leaf.ensure_autograd_meta();
  if (auto existing = meta.grad_accumulator.lock()) return std::static_pointer_cast<Node>(existing);
  auto node = detail::make_pooled<AccumulateGrad>(leaf);  // made again each step: from the small-object pool
  meta.grad_accumulator = node;
  return node;
}

}  // namespace ember::autograd
