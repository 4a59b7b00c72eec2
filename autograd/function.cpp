// autograd/function.cpp — recording a node: edges to the inputs, grad_fn on the outputs.
#include <ember/autograd/function.h>

#include <ember/autograd/anomaly.h>
#include <ember/autograd/view_tracking.h>
#include <ember/core/profiler.h>
#include <ember/core/small_object_pool.h>

namespace ember::autograd {

bool any_needs_grad(const TensorList& inputs) {
  if (!is_grad_enabled()) return false;
  for (const Tensor& input : inputs) {
    if (input.defined() && input.requires_grad()) return true;
  }
  return false;
}

namespace {
// "mul(Tensor[2, 3] float32, Tensor[3] float32)" — anomaly mode's note of the forward op.
std::string describe_forward(const std::string& node_name, std::span<const Tensor> inputs) {
  // "LogSoftmaxBackward0" -> "log_softmax": the name of the forward function.
  std::string camel = node_name.substr(0, node_name.find("Backward"));
  std::string op;
  for (std::size_t i = 0; i < camel.size(); ++i) {
    char c = camel[i];
    if (c >= 'A' && c <= 'Z') {
      if (i > 0) op += '_';
      c = static_cast<char>(c - 'A' + 'a');
    }
    op += c;
  }
  std::string text = op + "(";
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (i > 0) text += ", ";
    text += inputs[i].defined() ? "Tensor" + shape_to_string(inputs[i].sizes()) + " " + dtype_name(inputs[i].dtype())
                                : "None";
  }
  return text + ")";
}
}  // namespace

std::shared_ptr<Node> record(const std::string& name, std::span<const Tensor> inputs, std::span<const Tensor> outputs) {
  auto node = detail::make_pooled<Node>(name);
  node->reserve(inputs.size(), outputs.size());
  for (const Tensor& input : inputs) {
    // Only inputs that require grad get a real edge; the formula skips the others.
    node->add_next_edge(input.defined() && input.requires_grad() ? gradient_edge(input) : Edge{});
  }
  for (const Tensor& output : outputs) {
    std::uint32_t slot = node->add_gradient_slot(output);
    if (!output.is_floating_point()) continue;  // integer outputs (indices) carry no gradient
    AutogradMeta& meta = output.ensure_autograd_meta();
    meta.requires_grad = true;
    meta.grad_fn = node;
    meta.output_nr = slot;
  }
  if (is_anomaly_enabled()) node->set_forward_context(describe_forward(name, inputs));
  profiler::note_recorded_node(name, node->sequence_nr());  // the open op's autograd_node
  return node;
}

void rebase_history(const Tensor& self, const std::shared_ptr<Node>& node) {
  const AutogradMeta* self_meta = self.autograd_meta();
  if (self_meta != nullptr && self_meta->is_view && self_meta->view_base.defined()) {
    rebase_view_history(self, node);
    return;
  }
  AutogradMeta& meta = self.ensure_autograd_meta();
  meta.grad_fn = node;
  meta.output_nr = node->add_gradient_slot(self);
  meta.requires_grad = true;
  meta.grad_accumulator.reset();
}

void check_inplace(const Tensor& self, bool records) {
  if (!records) return;
  const AutogradMeta* meta = self.autograd_meta();
  if (meta != nullptr && meta->is_view) {
    if (meta->view_created_in_no_grad) {
      throw AutogradError(
          "A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given that this "
          "use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the view "
          "and the inplace either both inside the no_grad block (if you don't want the inplace to be tracked) or both "
          "outside (if you want the inplace to be tracked).");
    }
    if (self.requires_grad() && meta->view_base.defined() && meta->view_base.is_leaf()) {
      throw AutogradError("a view of a leaf Variable that requires grad is being used in an in-place operation.");
    }
  }
  if (self.requires_grad() && self.is_leaf()) {
    throw AutogradError("a leaf Variable that requires grad is being used in an in-place operation.");
  }
}

}  // namespace ember::autograd
