// autograd/saved_tensor.cpp — saving a tensor for backward, and the version check on unpack.
#include <ember/autograd/saved_tensor.h>

#include <ember/autograd/node.h>
#include <ember/core/autograd_meta.h>
#include <ember/core/native.h>

namespace ember::autograd {

namespace {
// PyTorch names tensors in this message by their legacy type: [torch.FloatTensor [2, 3]].
std::string legacy_type_name(const Tensor& tensor) {
  std::string prefix = tensor.is_cuda() ? "torch.cuda." : "torch.";
  return "[" + prefix + scalar_type_name(tensor.dtype()) + "Tensor " + shape_to_string(tensor.sizes()) + "]";
}
}  // namespace

SavedTensor::SavedTensor(const Tensor& tensor, bool is_output, std::string name, bool hold_weakly)
    : held_weakly_(hold_weakly && !is_output), is_output_(is_output), defined_(tensor.defined()), name_(std::move(name)) {
  if (!defined_) return;
  saved_version_ = tensor.version();
  requires_grad_ = tensor.requires_grad();
  output_nr_ = tensor.output_nr();
  // An output points at the node saving it: keep only a bare alias (no autograd fields)
  // so node -> saved output -> node is not a reference cycle. Inputs are kept as they are.
  data_ = is_output || held_weakly_ ? native::alias(tensor) : tensor;
  if (held_weakly_) weak_original_ = tensor.impl_ptr();
}

Tensor SavedTensor::unpack(const std::shared_ptr<Node>& owner) const {
  EMBER_CHECK(!released_, AutogradError,
              "Trying to backward through the graph a second time (or directly access saved tensors after they "
              "have already been freed). Saved intermediate values of the graph are freed when you call "
              ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
              "graph a second time or if you need to access saved tensors after calling backward.");
  if (!defined_) return Tensor();
  if (data_.version() != saved_version_) {
    std::string who = legacy_type_name(data_);
    if (is_output_) {
      who += ", which is output " + std::to_string(output_nr_) + " of " + owner->name() + ",";
    } else if (auto producer = (held_weakly_ ? Tensor(weak_original_.lock()) : data_).grad_fn()) {
      // A saved input is the very tensor (same handle): name what produces it *now*, as
      // PyTorch does (after an in-place op that is the in-place op's node).
      who += ", which is output " + std::to_string(data_.output_nr()) + " of " + producer->name() + ",";
    }
    throw AutogradError(make_message(
        "one of the variables needed for gradient computation has been modified by an inplace operation: ", who,
        " is at version ", data_.version(), "; expected version ", saved_version_,
        " instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
        "with torch.autograd.set_detect_anomaly(True)."));
  }
  if (held_weakly_) {
    Tensor original(weak_original_.lock());
    return original.defined() ? original : data_;
  }
  if (!is_output_) return data_;
  // Rebuild a handle on the output that belongs to `owner` again, so a formula using it
  // under create_graph differentiates through this node (e.g. sigmoid's s * (1 - s)).
  Tensor output = native::alias(data_);
  if (requires_grad_) {
    AutogradMeta& meta = output.ensure_autograd_meta();
    meta.requires_grad = true;
    meta.grad_fn = owner;
    meta.output_nr = output_nr_;
  }
  return output;
}

}  // namespace ember::autograd
