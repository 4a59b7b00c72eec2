// autograd/node.h — a node of the autograd graph (the "tape") and the edges between nodes.
//
// Tutorial §3–§4. When `loss = F.binary_cross_entropy(torch.sigmoid(w1 * x1 + b), y)` runs
// with w1 and b requiring grad, each op leaves one Node behind:
//   BinaryCrossEntropyBackward0 -> SigmoidBackward0 -> AddBackward0 -> MulBackward0 -> AccumulateGrad(w1)
//                                                                   \-> AccumulateGrad(b)
// A Node knows
//   - its name (what `grad_fn=<...>` prints),
//   - its next edges: for each differentiable input of the forward op, the node that
//     produced that input and which of that node's outputs it was (an Edge). An input that
//     does not require grad has an invalid (empty) edge;
//   - its saved tensors (SavedTensor: handle + version snapshot), and
//   - its backward formula: a function from the gradients w.r.t. its outputs to the
//     gradients w.r.t. its inputs, one per next edge.
// The engine (engine.h) walks the nodes from the loss backwards and calls apply().
// Formulas are written in ember's public ops, so with create_graph they record a graph too.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <ember/autograd/saved_tensor.h>
#include <ember/core/autograd_meta.h>
#include <ember/core/small_object_pool.h>
#include <ember/core/tensor.h>

namespace ember::autograd {

using TensorList = std::vector<Tensor>;

class Node;
struct Edge;
struct GradientSlot;

// A node's short lists (its edges, gradient slots and saved tensors: one to three each) take
// their memory from the small-object pool (core/small_object_pool.h) rather than malloc: a
// training step makes and frees a dozen nodes, three lists each (docs/performance.md).
template <class T>
using NodeList = std::vector<T, detail::PoolAllocator<T>>;
using EdgeList = NodeList<Edge>;

// Where a gradient goes: input slot `input_nr` of `node`. An Edge with no node means
// "this input does not need a gradient".
struct Edge {
  std::shared_ptr<Node> node;
  std::uint32_t input_nr = 0;
  bool is_valid() const { return node != nullptr; }
};

// What a gradient arriving at one of the node's inputs must look like: the shape, dtype
// and device of the forward tensor it is the gradient of. The engine checks every
// gradient against it, which catches a wrong backward formula at the node that made it.
struct GradientSlot {
  Shape sizes;
  DType dtype = DType::Float32;
  Device device = kCPU;
};

class Node : public GradFn, public std::enable_shared_from_this<Node> {
 public:
  // (node, gradients w.r.t. the node's outputs) -> gradients w.r.t. its inputs.
  using BackwardFormula = std::function<TensorList(Node& node, const TensorList& grad_outputs)>;

  explicit Node(std::string name);
  // Frees the graph below this node iteratively (see node.cpp): a chain of a million ops
  // must not recurse a million destructors deep.
  ~Node() override;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  std::string name() const override { return name_; }

  // ---- edges and slots
  const EdgeList& next_edges() const { return next_edges_; }
  void add_next_edge(Edge edge) { next_edges_.push_back(std::move(edge)); }
  // Room for a recorded op's edges and slots, so that filling them allocates once each.
  void reserve(std::size_t inputs, std::size_t outputs) {
    next_edges_.reserve(inputs);
    gradient_slots_.reserve(outputs);
  }
  // True when input i of the forward op needs its gradient (formulas skip the others).
  bool needs_input_grad(std::size_t i) const { return i < next_edges_.size() && next_edges_[i].is_valid(); }
  // One slot per forward output: the gradient the engine will hand this node for it.
  std::uint32_t add_gradient_slot(const Tensor& output);
  const NodeList<GradientSlot>& gradient_slots() const { return gradient_slots_; }

  // ---- saved tensors (in the order saved; formulas fetch them by index)
  void save(const std::string& name, const Tensor& tensor) { saved_.emplace_back(tensor, false, name); }
  void save_output(const std::string& name, const Tensor& output) { saved_.emplace_back(output, true, name); }
  // For an in-place node saving its own target (see saved_tensor.h: avoids a reference cycle).
  void save_inplace_target(const std::string& name, const Tensor& target) {
    saved_.emplace_back(target, false, name, true);
  }
  Tensor saved(std::size_t index);  // version-checked; throws after release
  const NodeList<SavedTensor>& saved_tensors() const { return saved_; }
  // Virtual: a node that runs another node's formula (CopySlices) releases that one's too.
  virtual void release_saved_tensors();

  // ---- the formula
  void set_backward(BackwardFormula formula) { formula_ = std::move(formula); }
  virtual TensorList apply(const TensorList& grad_outputs);

  // ---- hooks run on the gradient arriving for output `output_nr` before apply()
  // (Tensor::register_hook on a non-leaf, and retain_grad, end up here).
  void add_pre_hook(std::uint32_t output_nr, TensorHook hook) { pre_hooks_.emplace_back(output_nr, std::move(hook)); }
  void add_retain_grad_hook(std::uint32_t output_nr, TensorHook hook) {
    retain_hooks_.emplace_back(output_nr, std::move(hook));
  }
  // Applies the pre-hooks (user hooks first, then retain_grad) to `grads` in place.
  virtual void run_pre_hooks(TensorList& grads);

  // Creation order: a node made later has a larger number. The engine runs ready nodes
  // with larger numbers first, which keeps the order deterministic. AccumulateGrad nodes
  // take kAccumulateGradSequenceNr instead (see accumulate_grad.h).
  std::uint64_t sequence_nr() const { return sequence_nr_; }
  // PyTorch's UINT64_MAX for AccumulateGrad: the highest priority, so a leaf's gradient is
  // accumulated — and its post-accumulate-grad hooks run — as soon as it is ready.
  static constexpr std::uint64_t kAccumulateGradSequenceNr = UINT64_MAX;
  // Anomaly mode: what forward op made this node (autograd/anomaly.h).
  const std::string& forward_context() const { return forward_context_; }
  void set_forward_context(std::string context) { forward_context_ = std::move(context); }

 protected:
  // For node kinds with a fixed priority instead of their creation order (AccumulateGrad).
  Node(std::string name, std::uint64_t sequence_nr);
  // Freeing without recursion (node.cpp): a node that owns other nodes outside its edges
  // (CopySlices owns the in-place op's node) moves them onto `stack` when they have no
  // other owner, and frees `stack` with free_iteratively from its own destructor.
  virtual void move_out_owned_nodes(std::vector<std::shared_ptr<Node>>& /*stack*/) {}
  static void free_iteratively(std::vector<std::shared_ptr<Node>>& stack);
  NodeList<SavedTensor> saved_;

 private:
  std::string name_;
  EdgeList next_edges_;
  NodeList<GradientSlot> gradient_slots_;
  BackwardFormula formula_;
  std::vector<std::pair<std::uint32_t, TensorHook>> pre_hooks_;
  std::vector<std::pair<std::uint32_t, TensorHook>> retain_hooks_;
  std::uint64_t sequence_nr_;
  std::string forward_context_;
};

// A tensor hook may replace a gradient, but only with one of the same type (dtype and
// device) and size: anything else would be summed into the wrong shape or land on a leaf
// of another dtype. Throws PyTorch's messages ("hook 'hook' has changed the size of value").
// C++ hooks have no name, so they are all called 'hook'.
void check_hook_result(const Tensor& original, const Tensor& replacement);

// The edge along which a gradient for `tensor` flows: its grad_fn (and output_nr), or for
// a leaf that requires grad its AccumulateGrad node, or an invalid edge.
Edge gradient_edge(const Tensor& tensor);

}  // namespace ember::autograd
