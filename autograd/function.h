// autograd/function.h — how an op records itself on the tape.
//
// Tutorial §4. Every differentiable op in the *_ops.cpp files follows one pattern:
//
//   Tensor mul(const Tensor& a, const Tensor& b) {
//     Tensor out = native::mul(a, b);                       // 1. compute (no autograd)
//     if (needs_grad(a, b)) {                               // 2. a flag check when off
//       auto node = record("MulBackward0", {a, b}, out);    // 3. node + edges + out.grad_fn
//       node->save("self", a);                              // 4. what the formula needs
//       node->save("other", b);
//       node->set_backward([](Node& n, const TensorList& grads) -> TensorList {
//         const Tensor& grad = grads[0];                    // 5. d loss / d out
//         Tensor a = n.saved(0), b = n.saved(1);
//         return {n.needs_input_grad(0) ? sum_to(grad * b, a.sizes()) : Tensor(),
//                 n.needs_input_grad(1) ? sum_to(grad * a, b.sizes()) : Tensor()};
//       });
//     }
//     return out;
//   }
//
// The formula is written with ember's public ops, so when backward runs with
// create_graph=true it records a graph of its own, which is what higher derivatives use.
#pragma once

#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <ember/autograd/node.h>
#include <ember/core/autograd_meta.h>
#include <ember/core/tensor.h>

namespace ember::autograd {

// Grad mode on and at least one (defined) input requires grad. This is the only cost an op
// pays when autograd is not involved.
template <class... Tensors>
bool needs_grad(const Tensors&... inputs) {
  if (!is_grad_enabled()) return false;
  return ((inputs.defined() && inputs.requires_grad()) || ...);
}
bool any_needs_grad(const TensorList& inputs);

// Makes the node `name`, with one next edge per input (inputs that do not require grad get
// an invalid edge) and one gradient slot per output; marks each output as produced by the
// node (grad_fn, output_nr, requires_grad). Call only when needs_grad(...) is true.
// The inputs and outputs are read, not kept: a braced list `{a, b}` and a single output are
// passed without building a std::vector for them (two heap blocks per op in a small step).
std::shared_ptr<Node> record(const std::string& name, std::span<const Tensor> inputs, std::span<const Tensor> outputs);
inline std::shared_ptr<Node> record(const std::string& name, const TensorList& inputs, const TensorList& outputs) {
  return record(name, std::span<const Tensor>(inputs), std::span<const Tensor>(outputs));
}
inline std::shared_ptr<Node> record(const std::string& name, const TensorList& inputs, const Tensor& output) {
  return record(name, std::span<const Tensor>(inputs), std::span<const Tensor>(&output, 1));
}
inline std::shared_ptr<Node> record(const std::string& name, std::initializer_list<Tensor> inputs,
                                    const Tensor& output) {
  return record(name, std::span<const Tensor>(inputs.begin(), inputs.size()), std::span<const Tensor>(&output, 1));
}

// Makes `self` (modified in place by an op) the output of `node`: its history is
// "rebased" so later ops see the in-place result. `node`'s first edge must already point
// where self's gradient used to flow. When self is a view, its base's history is rewritten
// instead (CopySlices, view_tracking.h) and the view's grad_fn is rebuilt from it.
void rebase_history(const Tensor& self, const std::shared_ptr<Node>& node);

// Before an in-place op on `self`; `records` is needs_grad(self, other inputs...). Refuses,
// with PyTorch's messages, a leaf that requires grad, a view of such a leaf, and a view made
// in no-grad mode (which grad mode on would have to track).
void check_inplace(const Tensor& self, bool records);

}  // namespace ember::autograd
