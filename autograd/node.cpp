// autograd/node.cpp — graph nodes: gradient slots, saved tensors, hooks, apply().
#include <ember/autograd/node.h>

#include <atomic>

#include <ember/autograd/accumulate_grad.h>

namespace ember::autograd {

namespace {
std::atomic<std::uint64_t> next_sequence_nr{0};
}  // namespace

Node::Node(std::string name) : name_(std::move(name)), sequence_nr_(next_sequence_nr++) {}

Node::Node(std::string name, std::uint64_t sequence_nr) : name_(std::move(name)), sequence_nr_(sequence_nr) {}

std::uint32_t Node::add_gradient_slot(const Tensor& output) {
  gradient_slots_.push_back({output.sizes(), output.dtype(), output.device()});
  return static_cast<std::uint32_t>(gradient_slots_.size() - 1);
}

Tensor Node::saved(std::size_t index) {
  EMBER_CHECK(index < saved_.size(), IndexError, name_, " has no saved tensor ", index);
  return saved_[index].unpack(shared_from_this());
}

void Node::release_saved_tensors() {
  for (SavedTensor& saved : saved_) saved.release();
}

TensorList Node::apply(const TensorList& grad_outputs) {
  EMBER_CHECK(formula_ != nullptr, NotImplementedError, "the derivative for ", name_, " is not implemented");
  return formula_(*this, grad_outputs);
}

void Node::run_pre_hooks(TensorList& grads) {
  for (auto* hooks : {&pre_hooks_, &retain_hooks_}) {
    for (auto& [output_nr, hook] : *hooks) {
      if (output_nr >= grads.size() || !grads[output_nr].defined()) continue;
      Tensor replacement = hook(grads[output_nr]);
      if (replacement.defined()) grads[output_nr] = replacement;
    }
  }
}

Edge gradient_edge(const Tensor& tensor) {
  if (!tensor.defined()) return {};
  if (auto grad_fn = tensor.grad_fn()) {
    return {std::static_pointer_cast<Node>(grad_fn), tensor.output_nr()};
  }
  if (tensor.requires_grad()) return {grad_accumulator(tensor), 0};
  return {};
}

}  // namespace ember::autograd
