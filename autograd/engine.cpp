// autograd/engine.cpp — the backward pass: dependency counting, gradient buffers, capture.
#include <ember/autograd/engine.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include <ember/autograd/accumulate_grad.h>
#include <ember/autograd/anomaly.h>
#include <ember/autograd/grad_mode.h>
#include <ember/autograd/ops.h>
#include <ember/core/factories.h>
#include <ember/core/native.h>
#include <ember/core/print.h>
#include <ember/core/profiler.h>
#include <ember/core/small_object_pool.h>

namespace ember::autograd {

namespace {

// Gradients arriving for one node, one entry per gradient slot; summed on arrival.
using GradientBuffer = TensorList;

// Emptied gradient lists kept for reuse: each node's buffer and the list its formula
// returns would otherwise be one heap block each per node per backward call. A few suffice
// (a node's lists come back as soon as it has run); more are let go, so that a long chain,
// which returns two lists per node and takes one, does not pile them up.
struct SpareLists {
  static constexpr std::size_t kKept = 8;
  SpareLists() { lists.reserve(kKept); }
  std::vector<TensorList> lists;
  TensorList take() {
    if (lists.empty()) return {};
    TensorList list = std::move(lists.back());
    lists.pop_back();
    return list;
  }
  void give(TensorList&& list) {
    list.clear();
    if (list.capacity() != 0 && lists.size() < kKept) lists.push_back(std::move(list));
  }
};

void accumulate(GradientBuffer& buffer, std::size_t slot, const Tensor& gradient, bool create_graph,
                SpareLists& spares) {
  if (buffer.capacity() == 0) buffer = spares.take();
  if (buffer.size() <= slot) buffer.resize(slot + 1);
  Tensor& current = buffer[slot];
  if (!current.defined()) {
    current = gradient;
  } else {
    // With create_graph the sum must be recorded too; otherwise a kernel add is enough.
    current = create_graph ? ember::add(current, gradient) : native::add(current, gradient);
  }
}

// A formula's gradient must fit the slot it flows into; a gradient with broadcast dims is
// summed down, a dtype difference is cast. Anything else is a bug in the formula.
Tensor validate_gradient(const Node& node, std::size_t index, Tensor gradient, const GradientSlot& slot) {
  if (!(IntArrayRef(gradient.sizes()) == IntArrayRef(slot.sizes))) {
    bool expandable = true;
    try {
      expandable = IntArrayRef(broadcast_shapes(slot.sizes, gradient.sizes())) == IntArrayRef(gradient.sizes());
    } catch (const ShapeError&) {
      expandable = false;
    }
    EMBER_CHECK(expandable, ShapeError, "Function ", node.name(), " returned an invalid gradient at index ", index,
                " - got ", shape_to_string(gradient.sizes()), " but expected shape compatible with ",
                shape_to_string(slot.sizes));
    gradient = sum_to(gradient, slot.sizes);
  }
  if (gradient.dtype() != slot.dtype) gradient = ember::to(gradient, slot.dtype);
  // The devices are compared here first so that the node's name (a string) is built only
  // when they differ, which is also gradient_needs_device_move's own first test.
  if (gradient.device() != slot.device &&
      gradient_needs_device_move(node.name(), index, slot.device, gradient.device(), gradient.dim())) {
    gradient = gradient.to(slot.device);
  }
  return gradient;
}

// What the engine knows about one node during a backward call.
struct NodeTask {
  int dependencies = 0;       // edges from nodes that have not run yet
  bool queued = false;        // pushed onto the ready queue (never twice)
  GradientBuffer gradients;   // gradients arrived so far, summed per slot
};

// Every node reachable from the roots, with its NodeTask, found by the node's address: an
// open-addressing table (linear probing, a power-of-two number of slots, at most half full)
// over a vector of tasks. A training step's graph has a few dozen nodes, each looked up once
// per edge into it; std::unordered_map spent a heap node and a bucket walk on each.
class NodeTable {
 public:
  NodeTable() : slots_(kInitialSlots), mask_(kInitialSlots - 1) { tasks_.reserve(kInitialSlots / 2); }
  // The node's task, made on first sight (`added` says so). The reference is good until the
  // next node is added.
  NodeTask& find_or_add(Node* node, bool& added) {
    Slot* slots = slots_.data();
    std::size_t i = home(node);
    while (slots[i].node != node) {
      if (slots[i].node == nullptr) return add(node, i, added);
      i = (i + 1) & mask_;
    }
    added = false;
    return tasks_[slots[i].task];
  }
  NodeTask& operator[](Node* node) {
    bool added = false;
    return find_or_add(node, added);
  }

 private:
  // 64 slots and 32 tasks: a training step's graph without growing, in blocks small enough
  // for malloc's per-thread cache.
  static constexpr std::size_t kInitialSlots = 64;
  struct Slot {
    Node* node = nullptr;
    std::uint32_t task = 0;
  };
  std::size_t home(const Node* node) const {  // Fibonacci hashing of the address
    const auto address = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(node));
    return static_cast<std::size_t>((address * 0x9E3779B97F4A7C15ull) >> 32) & mask_;
  }
  NodeTask& add(Node* node, std::size_t empty_slot, bool& added) {
    added = true;
    slots_[empty_slot] = {node, static_cast<std::uint32_t>(tasks_.size())};
    tasks_.emplace_back();
    if (2 * tasks_.size() > slots_.size()) grow();
    return tasks_.back();
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.size() * 2, Slot{});
    mask_ = slots_.size() - 1;
    for (const Slot& slot : old) {
      if (slot.node == nullptr) continue;
      std::size_t i = home(slot.node);
      while (slots_[i].node != nullptr) i = (i + 1) & mask_;
      slots_[i] = slot;
    }
  }
  std::vector<Slot> slots_;
  std::size_t mask_;
  std::vector<NodeTask> tasks_;
};

// One backward call's state.
struct GraphTask {
  bool retain_graph = false;
  bool create_graph = false;
  NodeTable nodes;
  SpareLists spares;
  // grad() mode: where to capture, and which nodes lead to a capture (the only ones run).
  bool capture_mode = false;
  std::unordered_map<Node*, std::vector<std::pair<std::uint32_t, std::size_t>>> captures;  // node -> (slot, input #)
  std::unordered_set<Node*> needed;
  TensorList captured;
};

// Marks (in task.needed) every node from which a capture node can be reached: a post-order
// walk (a node is needed when it is a capture or one of its children is needed), with an
// explicit stack so a graph a million nodes deep does not overflow the call stack.
void mark_needed(const std::vector<Node*>& roots, GraphTask& task) {
  struct Frame {
    Node* node;
    std::size_t next_edge;  // the next child to look at
    bool needed;            // a capture, or a needed child seen so far
  };
  std::unordered_map<Node*, bool> done;  // node -> needed, once all its children are known
  std::vector<Frame> stack;
  auto enter = [&](Node* node) {
    done.emplace(node, false);  // the graph is acyclic: this only stops a second visit
    stack.push_back({node, 0, task.captures.count(node) > 0});
  };
  for (Node* root : roots) {
    if (done.count(root) == 0) enter(root);
    while (!stack.empty()) {
      Frame& frame = stack.back();
      const auto& edges = frame.node->next_edges();
      if (frame.next_edge < edges.size()) {
        const Edge& edge = edges[frame.next_edge++];
        if (!edge.is_valid()) continue;
        auto found = done.find(edge.node.get());
        if (found == done.end()) {
          enter(edge.node.get());  // invalidates `frame`; the loop fetches it again
        } else if (found->second) {
          frame.needed = true;
        }
        continue;
      }
      const Frame finished = frame;
      stack.pop_back();
      done[finished.node] = finished.needed;
      if (finished.needed) {
        task.needed.insert(finished.node);
        if (!stack.empty()) stack.back().needed = true;
      }
    }
  }
}

bool is_needed(const GraphTask& task, Node* node) { return !task.capture_mode || task.needed.count(node) > 0; }

// Counts, for every node reachable from the roots, the edges that point at it.
void compute_dependencies(const std::vector<Node*>& roots, GraphTask& task) {
  std::vector<Node*> stack;
  stack.reserve(32);
  bool first_visit = false;
  for (Node* root : roots) {
    task.nodes.find_or_add(root, first_visit);
    if (first_visit) stack.push_back(root);
  }
  while (!stack.empty()) {
    Node* node = stack.back();
    stack.pop_back();
    for (const Edge& edge : node->next_edges()) {
      if (!edge.is_valid() || !is_needed(task, edge.node.get())) continue;
      task.nodes.find_or_add(edge.node.get(), first_visit).dependencies += 1;
      if (first_visit) stack.push_back(edge.node.get());
    }
  }
}

void check_anomaly(const Node& node, const TensorList& gradients) {
  for (std::size_t i = 0; i < gradients.size(); ++i) {
    std::string kind = find_non_finite(gradients[i]);
    if (kind.empty()) continue;
    std::string origin = node.forward_context().empty() ? std::string("(unknown: the node was recorded with anomaly mode off)")
                                                        : node.forward_context();
    throw AutogradError(make_message("Function '", node.name(), "' returned ", kind, " values in its ", i,
                                     "th output. The node was created in the forward pass by: ", origin));
  }
}

// Runs the whole backward pass from `roots` with the given root gradients.
void execute(const std::vector<Edge>& roots, const TensorList& root_grads, GraphTask& task) {
  std::vector<Node*> root_nodes;
  for (const Edge& root : roots) root_nodes.push_back(root.node.get());
  if (task.capture_mode) mark_needed(root_nodes, task);
  compute_dependencies(root_nodes, task);

  // Ready nodes, newest first (larger sequence number = created later in the forward).
  auto later_first = [](const std::shared_ptr<Node>& a, const std::shared_ptr<Node>& b) {
    return a->sequence_nr() < b->sequence_nr();
  };
  std::vector<std::shared_ptr<Node>> ready;  // a heap under later_first
  ready.reserve(16);
  auto push_ready = [&](const std::shared_ptr<Node>& node) {
    ready.push_back(node);
    std::push_heap(ready.begin(), ready.end(), later_first);
  };
  for (std::size_t i = 0; i < roots.size(); ++i) {
    accumulate(task.nodes[roots[i].node.get()].gradients, roots[i].input_nr, root_grads[i], task.create_graph,
               task.spares);
  }
  for (const Edge& root : roots) {
    NodeTask& entry = task.nodes[root.node.get()];
    if (entry.dependencies == 0 && is_needed(task, root.node.get()) && !entry.queued) {
      entry.queued = true;
      push_ready(root.node);
    }
  }

  // Formulas record only under create_graph (AccumulateGrad reads the mode too).
  AutoGradMode grad_mode(task.create_graph);
  while (!ready.empty()) {
    std::pop_heap(ready.begin(), ready.end(), later_first);
    const std::shared_ptr<Node> node = std::move(ready.back());
    ready.pop_back();
    GradientBuffer grads = std::move(task.nodes[node.get()].gradients);
    grads.resize(std::max(grads.size(), node->gradient_slots().size()));
    node->run_pre_hooks(grads);

    bool run_formula = true;
    if (task.capture_mode) {
      if (auto found = task.captures.find(node.get()); found != task.captures.end()) {
        for (auto [slot, input_index] : found->second) task.captured[input_index] = grads[slot];
      }
      // In grad() mode leaves are never written, and a capture node runs only if another
      // capture lies below it.
      bool leads_further = false;
      for (const Edge& edge : node->next_edges()) {
        if (edge.is_valid() && task.needed.count(edge.node.get()) > 0) leads_further = true;
      }
      run_formula = leads_further;
    }

    bool any_gradient = false;
    for (const Tensor& grad : grads) any_gradient = any_gradient || grad.defined();
    TensorList outputs;
    if (run_formula && any_gradient) {
      // The profiler's event for the node (core/profiler.h): the ops its formula calls nest
      // inside it, and its sequence number links it to the forward op that recorded it.
      const std::string profiled_name = profiler::is_enabled() ? node->name() : std::string();
      const profiler::RecordScope scope(profiler::EventKind::Backward, profiled_name.c_str());
      profiler::note_recorded_node(profiled_name, node->sequence_nr());
      outputs = node->apply(grads);
      if (is_anomaly_enabled()) check_anomaly(*node, outputs);
      EMBER_CHECK(outputs.size() == node->next_edges().size(), AutogradError, "function ", node->name(),
                  " returned an incorrect number of gradients (expected ", node->next_edges().size(), ", got ",
                  outputs.size(), ")");
    }
    if (!task.retain_graph) node->release_saved_tensors();

    const auto& edges = node->next_edges();
    for (std::size_t i = 0; i < edges.size(); ++i) {
      const Edge& edge = edges[i];
      if (!edge.is_valid() || !is_needed(task, edge.node.get())) continue;
      NodeTask& next = task.nodes[edge.node.get()];
      if (i < outputs.size() && outputs[i].defined()) {
        const GradientSlot& slot = edge.node->gradient_slots()[edge.input_nr];
        Tensor gradient = validate_gradient(*node, i, outputs[i], slot);
        accumulate(next.gradients, edge.input_nr, gradient, task.create_graph, task.spares);
      }
      if (--next.dependencies == 0 && !next.queued) {
        next.queued = true;
        push_ready(edge.node);
      }
    }
    task.spares.give(std::move(grads));
    task.spares.give(std::move(outputs));
  }
}

// The root edges and gradients (implicit 1 for one-element outputs), with PyTorch's checks.
void prepare_roots(const TensorList& tensors, const TensorList& grad_tensors, std::vector<Edge>& edges,
                   TensorList& grads) {
  EMBER_CHECK(grad_tensors.empty() || grad_tensors.size() == tensors.size(), ValueError, "got ", tensors.size(),
              " tensors and ", grad_tensors.size(), " gradients");
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& output = tensors[i];
    Edge edge = gradient_edge(output);
    EMBER_CHECK(edge.is_valid(), AutogradError, "element ", i,
                " of tensors does not require grad and does not have a grad_fn");
    Tensor grad = grad_tensors.empty() ? Tensor() : grad_tensors[i];
    if (!grad.defined()) {
      EMBER_CHECK(output.numel() == 1, AutogradError, "grad can be implicitly created only for scalar outputs");
      grad = ones_like(output);
    } else {
      EMBER_CHECK(IntArrayRef(grad.sizes()) == IntArrayRef(output.sizes()), ShapeError,
                  "Mismatch in shape: grad_output[", i, "] has a shape of ", size_string(grad.sizes()),
                  " and output[", i, "] has a shape of ", size_string(output.sizes()), ".");
    }
    edges.push_back(edge);
    grads.push_back(grad);
  }
}

}  // namespace

bool gradient_needs_device_move(const std::string& function, std::size_t index, Device expected, Device got,
                                std::int64_t dim) {
  if (got == expected) return false;
  EMBER_CHECK(dim == 0, DeviceError, "Function ", function, " returned an invalid gradient at index ", index,
              " - expected device ", expected.str(), " but got ", got.str());
  return true;
}

void backward(const TensorList& tensors, const TensorList& grad_tensors, std::optional<bool> retain_graph,
              bool create_graph) {
  const profiler::RecordScope scope(profiler::EventKind::Annotation, "backward");
  GraphTask task;
  task.retain_graph = retain_graph.value_or(create_graph);
  task.create_graph = create_graph;
  std::vector<Edge> edges;
  TensorList grads;
  prepare_roots(tensors, grad_tensors, edges, grads);
  execute(edges, grads, task);
}

TensorList grad(const TensorList& outputs, const TensorList& inputs, const TensorList& grad_outputs,
                std::optional<bool> retain_graph, bool create_graph, bool allow_unused) {
  GraphTask task;
  task.retain_graph = retain_graph.value_or(create_graph);
  task.create_graph = create_graph;
  task.capture_mode = true;
  task.captured.resize(inputs.size());
  // Keep the capture nodes alive for the whole pass (the raw pointers in task index them;
  // an unused leaf's accumulator would otherwise die at once).
  std::vector<std::shared_ptr<Node>> keep_alive;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    Edge edge = gradient_edge(inputs[i]);
    EMBER_CHECK(edge.is_valid(), AutogradError, "One of the differentiated Tensors does not require grad");
    task.captures[edge.node.get()].emplace_back(edge.input_nr, i);
    keep_alive.push_back(edge.node);
  }
  std::vector<Edge> edges;
  TensorList grads;
  prepare_roots(outputs, grad_outputs, edges, grads);
  execute(edges, grads, task);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    EMBER_CHECK(task.captured[i].defined() || allow_unused, AutogradError,
                "One of the differentiated Tensors appears to not have been used in the graph. Set "
                "allow_unused=True if this is the desired behavior.");
  }
  return task.captured;
}

}  // namespace ember::autograd
