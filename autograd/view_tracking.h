// autograd/view_tracking.h — views and in-place ops: a write through a view changes its
// base, a write to the base changes its views, and autograd must follow both.
//
// Tutorial §2.3 (views share memory) meets §4 (autograd). PyTorch's semantics, which
// docs/autograd.md explains for a learner:
//
//   * Every differentiable view op (view, reshape-as-view, select, slice, narrow, t,
//     transpose, permute, squeeze, unsqueeze, flatten, expand) on a floating tensor marks
//     its output a view of a *base*: the tensor that owns the memory (a view of a view
//     records the first base). core/autograd_meta.h holds the fields.
//   * An in-place op on a view rewrites the base's history: the base's grad_fn becomes a
//     CopySlices node that gives the region outside the view the base's old gradient and
//     the region inside it what the in-place op's backward gives the view's old value. The
//     view's grad_fn then becomes AsStridedBackward0: "this view of the base's new history".
//   * An in-place op on the base (or on another view) moves the shared version counter on;
//     a view whose grad_fn was set at an older version rebuilds it on its next use as
//     AsStridedBackward0 of the base's *current* history (the refresh below).
//   * Refused, with PyTorch's messages: an in-place op on a view of a leaf that requires
//     grad, and on a view made in no-grad mode while grad mode is on (check_inplace in
//     function.h).
#pragma once

#include <memory>

#include <ember/autograd/node.h>
#include <ember/core/tensor.h>

namespace ember::autograd {

// Marks `view`, the output of a view op on `self`, as a view of self's base. A no-op for
// non-floating tensors and for outputs that do not share self's memory (a reshape that had
// to copy). Returns `view` for convenience. Call after recording the op's node.
const Tensor& track_view(const Tensor& self, const Tensor& view);

// True when `tensor` was made by a differentiable view op (tracked above).
bool is_tracked_view(const Tensor& tensor);

// Gives `view` a fresh grad_fn: AsStridedBackward0 of its base's current history. Called
// through core's refresh_view_grad_fn hook when the view is stale, and by rebase_history
// after an in-place op on the view.
void rebuild_view_grad_fn(const Tensor& view);

// The base of an in-place op on a view: base.grad_fn becomes CopySlices(base's old history,
// `inplace_node` applied to the view's region), and the view's grad_fn is rebuilt.
// `inplace_node`'s first edge is the view's old history, its other edges the op's other
// inputs.
void rebase_view_history(const Tensor& view, const std::shared_ptr<Node>& inplace_node);

// CopySlices (PyTorch's name): the base's new history after an in-place op on one of its
// views. Its edges are the base's old history, then the in-place op's other inputs.
class CopySlices : public Node {
 public:
  // `base` and `view` give the geometry (sizes, strides, offset) the backward needs.
  CopySlices(const Tensor& base, const Tensor& view, std::shared_ptr<Node> inplace_node);
  ~CopySlices() override;
  // grad (w.r.t. the whole base) -> outside the view: unchanged, to the base's old history;
  // inside it: through the in-place op's backward; and the op's other input gradients.
  TensorList apply(const TensorList& grad_outputs) override;
  void release_saved_tensors() override;
  const std::shared_ptr<Node>& inplace_node() const { return inplace_node_; }

 protected:
  void move_out_owned_nodes(std::vector<std::shared_ptr<Node>>& stack) override;

 private:
  Shape base_sizes_, base_strides_;
  std::int64_t base_offset_ = 0;
  Shape view_sizes_, view_strides_;
  std::int64_t view_offset_ = 0;
  std::shared_ptr<Node> inplace_node_;
};

}  // namespace ember::autograd
