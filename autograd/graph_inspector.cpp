// autograd/graph_inspector.cpp — walking the graph from a tensor's grad_fn.
#include <ember/autograd/graph_inspector.h>

#include <map>
#include <set>
#include <sstream>

#include <ember/autograd/accumulate_grad.h>
#include <ember/autograd/node.h>

namespace ember::autograd {

namespace {

std::string tensor_summary(const Tensor& tensor) {
  if (!tensor.defined()) return "freed";
  return shape_to_string(tensor.sizes()) + " " + dtype_name(tensor.dtype()) + " strides " +
         shape_to_string(tensor.strides());
}

std::string leaf_label(const AccumulateGrad& node) {
  const Tensor leaf = node.leaf();
  if (!leaf.defined()) return "freed leaf";
  std::string name = leaf.name().empty() ? std::string("leaf") : leaf.name();
  return name + " " + shape_to_string(leaf.sizes()) + " " + dtype_name(leaf.dtype());
}

std::string saved_label(const SavedTensor& saved) {
  std::string text = saved.name() + (saved.is_output() ? " (output)" : "") + ": ";
  if (saved.was_released()) return text + "freed";
  return text + tensor_summary(saved.peek()) + " version " + std::to_string(saved.saved_version());
}

// Escapes a label for a DOT string.
std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string to_dot(const Tensor& root) {
  std::ostringstream out;
  out << "digraph autograd {\n  rankdir=BT;\n  node [fontname=\"monospace\", fontsize=10];\n";
  std::string root_name = root.name().empty() ? std::string("output") : root.name();
  out << "  root [shape=box, style=filled, fillcolor=darkolivegreen1, label="
      << quoted(root_name + " " + shape_to_string(root.sizes()) + " " + dtype_name(root.dtype())) << "];\n";
  auto grad_fn = std::static_pointer_cast<Node>(root.grad_fn());
  if (!grad_fn) {
    out << "}\n";
    return out.str();
  }
  std::map<const Node*, int> ids;
  std::vector<const Node*> order{grad_fn.get()};
  ids[grad_fn.get()] = 0;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const Node* node = order[i];
    int id = ids[node];
    if (const auto* leaf = dynamic_cast<const AccumulateGrad*>(node)) {
      out << "  n" << id << " [shape=ellipse, style=filled, fillcolor=lightblue, label="
          << quoted(leaf_label(*leaf)) << "];\n";
    } else {
      out << "  n" << id << " [shape=box, style=filled, fillcolor=lightgrey, label=" << quoted(node->name()) << "];\n";
    }
    const auto& saved = node->saved_tensors();
    for (std::size_t s = 0; s < saved.size(); ++s) {
      out << "  n" << id << "_saved" << s << " [shape=note, style=filled, fillcolor=orange, label="
          << quoted(saved_label(saved[s])) << "];\n";
      out << "  n" << id << "_saved" << s << " -> n" << id << " [style=dotted];\n";
    }
    for (const Edge& edge : node->next_edges()) {
      if (!edge.is_valid()) continue;
      auto [found, inserted] = ids.emplace(edge.node.get(), static_cast<int>(ids.size()));
      if (inserted) order.push_back(edge.node.get());
      // Arrows point the way the forward computation went: input -> op.
      out << "  n" << found->second << " -> n" << id << ";\n";
    }
  }
  out << "  n0 -> root;\n}\n";
  return out.str();
}

std::string dump(const Tensor& root) {
  std::ostringstream out;
  auto grad_fn = std::static_pointer_cast<Node>(root.grad_fn());
  if (!grad_fn) {
    out << (root.requires_grad() ? "leaf tensor (no grad_fn)\n" : "tensor without autograd history\n");
    return out.str();
  }
  // A depth-first, children-in-order walk with an explicit stack (a deep graph must not
  // overflow the call stack): each entry is a line still to print.
  struct Line {
    const Node* node;
    std::string prefix;  // the tree drawing to the left of this node
    bool last;           // the last child of its parent (└─ rather than ├─)
    bool is_root;
    std::size_t depth;
  };
  // Past this depth children are drawn at their parent's indentation: a chain a million
  // nodes deep would otherwise need megabytes of tree drawing per line.
  constexpr std::size_t kMaxIndentDepth = 32;
  std::set<const Node*> seen;
  std::vector<Line> stack{{grad_fn.get(), "", true, true, 0}};
  while (!stack.empty()) {
    Line line = std::move(stack.back());
    stack.pop_back();
    const Node& node = *line.node;
    out << line.prefix << (line.is_root ? "" : (line.last ? "└─ " : "├─ "));
    if (const auto* leaf = dynamic_cast<const AccumulateGrad*>(&node)) {
      out << "AccumulateGrad (" << leaf_label(*leaf) << ")\n";
      continue;
    }
    out << node.name();
    if (!seen.insert(&node).second) {
      out << " (shown above)\n";
      continue;
    }
    const auto& saved = node.saved_tensors();
    for (std::size_t s = 0; s < saved.size(); ++s) out << (s == 0 ? "  saved: " : "; ") << saved_label(saved[s]);
    out << "\n";
    std::vector<const Node*> children;
    for (const Edge& edge : node.next_edges()) {
      if (edge.is_valid()) children.push_back(edge.node.get());
    }
    std::string child_prefix = line.prefix;
    if (line.depth < kMaxIndentDepth) child_prefix += line.is_root ? "" : (line.last ? "   " : "│  ");
    // Pushed last child first, so the first child is printed next.
    for (std::size_t c = children.size(); c-- > 0;) {
      stack.push_back({children[c], child_prefix, c + 1 == children.size(), false, line.depth + 1});
    }
  }
  return out.str();
}

}  // namespace ember::autograd
