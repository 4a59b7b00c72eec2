// autograd/view_tracking.cpp — view tracking, the stale-view refresh (AsStridedBackward0)
// and CopySlices. See view_tracking.h for the semantics.
//
// Both backward formulas work on *positions*: for each element of the view, the flat index
// (in the base's row-major order) of the base element sharing its memory. With them,
// "the gradient of the view's region of the base" is an index_select and "put a gradient
// into the view's region" an index_add — ember ops, so the formulas differentiate again
// under create_graph, and any view geometry (a slice with a step, a transpose of a
// select, ...) is one code path.
#include <ember/autograd/view_tracking.h>

#include <algorithm>
#include <vector>

#include <ember/autograd/function.h>
#include <ember/autograd/ops.h>
#include <ember/core/autograd_meta.h>
#include <ember/core/factories.h>

namespace ember::autograd {

namespace {

// Calls visit(storage_index) for each element of the geometry, in row-major order.
template <class Visit>
void for_each_storage_index(const Shape& sizes, const Shape& strides, std::int64_t offset, Visit visit) {
  const std::int64_t count = compute_numel(sizes);
  if (count == 0) return;
  std::vector<std::int64_t> index(sizes.size(), 0);
  std::int64_t position = offset;
  for (std::int64_t n = 0; n < count; ++n) {
    visit(position);
    // Odometer step: bump the last dim, carrying into earlier ones.
    for (std::size_t d = sizes.size(); d-- > 0;) {
      if (++index[d] < sizes[d]) {
        position += strides[d];
        break;
      }
      position -= strides[d] * (sizes[d] - 1);
      index[d] = 0;
    }
  }
}

// For each element of the view (row-major), the flat index (in the base's row-major order)
// of the base element that shares its memory: an int64 tensor of the view's numel, on
// `device`. Costs O(view numel) when the base is dense (a permutation of a contiguous
// layout: every tensor a kernel makes), O(base extent) otherwise.
Tensor view_positions_in_base(const Shape& base_sizes, const Shape& base_strides, std::int64_t base_offset,
                              const Shape& view_sizes, const Shape& view_strides, std::int64_t view_offset,
                              Device device) {
  Tensor positions = ember::empty({compute_numel(view_sizes)}, kInt64);
  std::int64_t* out = positions.data_ptr<std::int64_t>();
  auto outside = [](std::int64_t storage) {
    return AutogradError(make_message("internal error: an element of a view (storage index ", storage,
                                      ") is not an element of its base"));
  };
  // Dense base: its dims sorted by decreasing stride have strides size[k+1] * stride[k+1],
  // so a storage index splits into one index per dim by division.
  std::vector<std::size_t> order;
  for (std::size_t d = 0; d < base_sizes.size(); ++d) {
    if (base_sizes[d] != 1) order.push_back(d);
  }
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return base_strides[a] > base_strides[b]; });
  bool dense = true;
  std::int64_t expected_stride = 1;
  for (std::size_t k = order.size(); k-- > 0;) {
    dense = dense && base_strides[order[k]] == expected_stride;
    expected_stride *= base_sizes[order[k]];
  }
  if (dense) {
    const Shape row_major = contiguous_strides(base_sizes);
    for_each_storage_index(view_sizes, view_strides, view_offset, [&](std::int64_t storage) {
      std::int64_t relative = storage - base_offset, flat = 0;
      if (relative < 0) throw outside(storage);
      for (std::size_t d : order) {
        const std::int64_t index = relative / base_strides[d];
        if (index >= base_sizes[d]) throw outside(storage);
        flat += index * row_major[d];
        relative -= index * base_strides[d];
      }
      if (relative != 0) throw outside(storage);
      *out++ = flat;
    });
    return positions.to(device);
  }
  // Any other base (from_blob or as_strided with gaps): a table from storage index to
  // base index over the storage the base spans.
  std::int64_t lowest = base_offset, highest = base_offset;
  for (std::size_t d = 0; d < base_sizes.size(); ++d) {
    if (base_sizes[d] == 0) return positions.to(device);  // an empty base has empty views
    const std::int64_t reach = (base_sizes[d] - 1) * base_strides[d];
    (reach < 0 ? lowest : highest) += reach;
  }
  std::vector<std::int64_t> base_index_at(static_cast<std::size_t>(highest - lowest + 1), -1);
  std::int64_t flat = 0;
  for_each_storage_index(base_sizes, base_strides, base_offset, [&](std::int64_t storage) {
    base_index_at[static_cast<std::size_t>(storage - lowest)] = flat++;
  });
  for_each_storage_index(view_sizes, view_strides, view_offset, [&](std::int64_t storage) {
    const std::int64_t relative = storage - lowest;
    if (relative < 0 || relative >= static_cast<std::int64_t>(base_index_at.size()) ||
        base_index_at[static_cast<std::size_t>(relative)] < 0) {
      throw outside(storage);
    }
    *out++ = base_index_at[static_cast<std::size_t>(relative)];
  });
  return positions.to(device);
}

// The grad_fn of a refreshed view: the gradient w.r.t. the view, put into zeros of the
// base's shape at the view's positions (index_add, so elements a view repeats add up).
std::shared_ptr<Node> make_as_strided_backward(const Tensor& base, const Tensor& view) {
  auto node = std::make_shared<Node>("AsStridedBackward0");
  node->add_next_edge(base.requires_grad() ? gradient_edge(base) : Edge{});
  Shape base_sizes = base.sizes(), base_strides = base.strides();
  Shape view_sizes = view.sizes(), view_strides = view.strides();
  const std::int64_t base_offset = base.storage_offset(), view_offset = view.storage_offset();
  node->set_backward([=](Node&, const TensorList& grads) -> TensorList {
    const Tensor& grad = grads[0];
    Tensor positions = view_positions_in_base(base_sizes, base_strides, base_offset, view_sizes, view_strides,
                                              view_offset, grad.device());
    Tensor flat = ember::zeros({compute_numel(base_sizes)}, grad.options());
    return {ember::reshape(ember::index_add(flat, 0, positions, ember::reshape(grad, {-1})), base_sizes)};
  });
  return node;
}

// core's refresh_view_grad_fn hook: rebuilds the grad_fn of a view whose memory was
// written since its grad_fn was set.
void refresh_stale_view(const Tensor& view) {
  AutogradMeta& meta = *view.autograd_meta();
  meta.view_version = view.version();
  // PyTorch's rule: a view with no history of a base that needs none stays without one.
  if (meta.grad_fn == nullptr && !meta.view_base.requires_grad()) return;
  rebuild_view_grad_fn(view);
}

}  // namespace

const Tensor& track_view(const Tensor& self, const Tensor& view) {
  if (!view.defined() || view.is_same(self) || !view.is_floating_point() ||
      view.storage().get() != self.storage().get()) {
    return view;
  }
  const AutogradMeta* self_meta = self.autograd_meta();
  const bool self_is_view = self_meta != nullptr && self_meta->is_view;
  const Tensor base = self_is_view ? self_meta->view_base : self;
  // A view of a no-grad view is a no-grad view too (PyTorch propagates the creation mode).
  const bool no_grad = !is_grad_enabled() || (self_is_view && self_meta->view_created_in_no_grad);
  AutogradMeta& meta = view.ensure_autograd_meta();
  meta.is_view = true;
  meta.view_created_in_no_grad = no_grad;
  // A no-grad view only needs its base when the base requires grad (the view then requires
  // grad too, and a later in-place op must be refused). Not keeping the base otherwise keeps
  // the gradients the engine builds in no-grad mode (reshapes, transposes) from holding the
  // tensors they were made from, so AccumulateGrad can still take them without a copy.
  if (base.defined() && (!no_grad || base.requires_grad())) meta.view_base = base;
  meta.view_version = view.version();
  if (refresh_view_grad_fn.load(std::memory_order_relaxed) == nullptr) {
    refresh_view_grad_fn.store(&refresh_stale_view, std::memory_order_release);
  }
  return view;
}

bool is_tracked_view(const Tensor& tensor) {
  const AutogradMeta* meta = tensor.defined() ? tensor.autograd_meta() : nullptr;
  return meta != nullptr && meta->is_view;
}

void rebuild_view_grad_fn(const Tensor& view) {
  AutogradMeta& meta = view.ensure_autograd_meta();
  const Tensor base = meta.view_base;
  auto node = make_as_strided_backward(base, view);
  meta.grad_fn = node;
  meta.output_nr = node->add_gradient_slot(view);
  meta.requires_grad = true;
  meta.view_version = view.version();
}

void rebase_view_history(const Tensor& view, const std::shared_ptr<Node>& inplace_node) {
  const Tensor base = view.autograd_meta()->view_base;
  inplace_node->add_gradient_slot(view);  // what CopySlices hands it: the view's gradient
  auto copy_slices = std::make_shared<CopySlices>(base, view, inplace_node);
  AutogradMeta& base_meta = base.ensure_autograd_meta();
  base_meta.grad_fn = copy_slices;
  base_meta.output_nr = copy_slices->add_gradient_slot(base);
  base_meta.requires_grad = true;
  base_meta.grad_accumulator.reset();
  rebuild_view_grad_fn(view);
}

// ------------------------------------------------------------------ CopySlices

CopySlices::CopySlices(const Tensor& base, const Tensor& view, std::shared_ptr<Node> inplace_node)
    : Node("CopySlices"),
      base_sizes_(base.sizes()),
      base_strides_(base.strides()),
      base_offset_(base.storage_offset()),
      view_sizes_(view.sizes()),
      view_strides_(view.strides()),
      view_offset_(view.storage_offset()),
      inplace_node_(std::move(inplace_node)) {
  // Edge 0: the base's old history (the in-place node's edge 0, the view's old history, is
  // replaced: CopySlices itself maps the view's gradient back into the base).
  add_next_edge(base.requires_grad() ? gradient_edge(base) : Edge{});
  const auto& edges = inplace_node_->next_edges();
  for (std::size_t i = 1; i < edges.size(); ++i) add_next_edge(edges[i]);
}

CopySlices::~CopySlices() {
  std::vector<std::shared_ptr<Node>> stack;
  move_out_owned_nodes(stack);
  free_iteratively(stack);
}

void CopySlices::move_out_owned_nodes(std::vector<std::shared_ptr<Node>>& stack) {
  if (inplace_node_ != nullptr && inplace_node_.use_count() == 1) stack.push_back(std::move(inplace_node_));
  inplace_node_.reset();
}

void CopySlices::release_saved_tensors() {
  Node::release_saved_tensors();
  if (inplace_node_ != nullptr) inplace_node_->release_saved_tensors();
}

TensorList CopySlices::apply(const TensorList& grad_outputs) {
  const Tensor& grad = grad_outputs[0];  // w.r.t. the base after the in-place op
  Tensor positions = view_positions_in_base(base_sizes_, base_strides_, base_offset_, view_sizes_, view_strides_,
                                            view_offset_, grad.device());
  Tensor grad_flat = ember::reshape(grad, {-1});
  Tensor grad_of_view = ember::reshape(ember::index_select(grad_flat, 0, positions), view_sizes_);
  TensorList op_grads = inplace_node_->apply({grad_of_view});
  TensorList result(next_edges().size());
  if (needs_input_grad(0)) {
    // The view's old values were overwritten: inside the view's region the base's old
    // value gets what the in-place op's backward gives its first input, not `grad`.
    // outside: 1 outside the view's region, 0 inside (a constant: needs no gradient).
    const TensorOptions options = TensorOptions().dtype(grad.dtype()).device(grad.device());
    Tensor outside = ember::index_add(ember::ones({compute_numel(base_sizes_)}, options), 0, positions,
                                      ember::full({positions.numel()}, -1.0, options));
    Tensor base_grad = grad_flat * ember::clamp(outside, 0.0, std::nullopt);
    if (!op_grads.empty() && op_grads[0].defined()) {
      base_grad = ember::index_add(base_grad, 0, positions, ember::reshape(op_grads[0], {-1}));
    }
    result[0] = ember::reshape(base_grad, base_sizes_);
  }
  for (std::size_t i = 1; i < result.size() && i < op_grads.size(); ++i) result[i] = op_grads[i];
  return result;
}

}  // namespace ember::autograd
