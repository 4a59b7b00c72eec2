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

TensorList AccumulateGrad::apply(const TensorList& grad_outputs) {
  Tensor grad = grad_outputs.empty() ? Tensor() : grad_outputs[0];
  Tensor leaf = this->leaf();
  if (!grad.defined() || !leaf.defined()) return {};
  AutogradMeta& meta = leaf.ensure_autograd_meta();
  Tensor& stored = meta.grad;
  if (!stored.defined()) {
    // Take a private copy: the incoming gradient may be a view of someone else's data
    // (an expanded ones tensor, a user's gradient argument) and .grad() must be ours.
    // With create_graph the gradient keeps its graph (it can be differentiated again).
    stored = create_graph_ ? grad : native::clone(grad);
  } else if (create_graph_) {
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
    if (replacement.defined()) grads[0] = replacement;
  }
}

std::shared_ptr<Node> grad_accumulator(const Tensor& leaf) {
  AutogradMeta& meta = leaf.ensure_autograd_meta();
  if (auto existing = meta.grad_accumulator.lock()) return std::static_pointer_cast<Node>(existing);
  auto node = std::make_shared<AccumulateGrad>(leaf);
  meta.grad_accumulator = node;
  return node;
}

}  // namespace ember::autograd
