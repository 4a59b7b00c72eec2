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

// Destroying the output of a long chain frees its nodes. Left to the members' destructors,
// node k's next edge would release node k-1 from inside node k's destructor, and so on: one
// stack frame (several, in fact) per node, which overflows the stack around 60 000 ops.
// PyTorch's deleteNode does what this does: before the members go, every next edge that is
// the *last* owner of its node is moved onto an explicit stack, and the nodes on that stack
// are emptied the same way before they die, so each dies with no edges left to follow.
// Saved tensors are released first: a saved input (mul saves its operands) holds the
// previous node through the tensor's grad_fn, which would keep it from looking uniquely
// owned here, and would free it recursively when the members are destroyed.
namespace {
void move_out_unique_edges(EdgeList& edges, std::vector<std::shared_ptr<Node>>& stack) {
  for (Edge& edge : edges) {
    if (edge.node != nullptr && edge.node.use_count() == 1) stack.push_back(std::move(edge.node));
    edge.node.reset();  // shared elsewhere: just drop this reference (no destructor runs)
  }
}
}  // namespace

void Node::free_iteratively(std::vector<std::shared_ptr<Node>>& stack) {
  while (!stack.empty()) {
    std::shared_ptr<Node> node = std::move(stack.back());
    stack.pop_back();
    node->saved_.clear();
    node->move_out_owned_nodes(stack);
    move_out_unique_edges(node->next_edges_, stack);
    // `node` dies here, with nothing left to free: its own destructor stops at once.
  }
}

Node::~Node() {
  saved_.clear();
  std::vector<std::shared_ptr<Node>> stack;
  move_out_unique_edges(next_edges_, stack);
  free_iteratively(stack);
}

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
      if (!replacement.defined()) continue;
      check_hook_result(grads[output_nr], replacement);
      grads[output_nr] = replacement;
    }
  }
}

namespace {
// PyTorch names a tensor type by its legacy class: torch.FloatTensor, torch.cuda.LongTensor.
std::string legacy_type(const Tensor& tensor) {
  return std::string(tensor.is_cuda() ? "torch.cuda." : "torch.") + scalar_type_name(tensor.dtype()) + "Tensor";
}
}  // namespace

void check_hook_result(const Tensor& original, const Tensor& replacement) {
  // The order of PyTorch's checks (check_single_result): type, then device, then size.
  if (replacement.dtype() != original.dtype() || replacement.device().type() != original.device().type()) {
    throw AutogradError(make_message("hook 'hook' has changed the type of value (was ", legacy_type(original), " got ",
                                     legacy_type(replacement), ")"));
  }
  EMBER_CHECK(replacement.device() == original.device(), AutogradError,
              "hook 'hook' has changed the type of value (was a tensor on ", original.device().str(), " got one on ",
              replacement.device().str(), ")");
  EMBER_CHECK(IntArrayRef(replacement.sizes()) == IntArrayRef(original.sizes()), AutogradError,
              "hook 'hook' has changed the size of value");
}

Edge gradient_edge(const Tensor& tensor) {
  if (!tensor.defined()) return {};
  if (auto grad_fn = tensor.grad_fn()) {
    return {std::static_pointer_cast<Node>(grad_fn), tensor.output_nr()};
  }
  if (!tensor.requires_grad()) return {};
  // A view made in no-grad mode requires grad through its base but has no history: PyTorch
  // gives it no edge (it is not a leaf of its own unless requires_grad_() made it one).
  const AutogradMeta* meta = tensor.autograd_meta();
  if (meta->is_view && !meta->requires_grad) return {};
  return {grad_accumulator(tensor), 0};
}

}  // namespace ember::autograd
