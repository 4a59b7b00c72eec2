// autograd/indexing_ops.cpp — differentiable cat/stack and index-based gathers/scatters.
//
// Tutorial §2 (building batches) and §5 (cross-entropy picks one log-probability per row).
// Gathering and scattering are each other's backward:
//   index_select / gather  read  positions -> backward adds the gradient back at them
//   index_add / scatter_add write positions -> backward reads the gradient at them
// so every formula here is again an op of this file (which makes them twice differentiable).
#include <ember/autograd/function.h>
#include <ember/autograd/ops.h>
#include <ember/core/factories.h>
#include <ember/core/native.h>
#include <ember/core/profiler.h>

namespace ember {

using autograd::any_needs_grad;
using autograd::needs_grad;
using autograd::Node;
using autograd::record;
using autograd::TensorList;

Tensor cat(const std::vector<Tensor>& tensors, std::int64_t dim) {
  EMBER_RECORD_FUNCTION("cat", tensors);
  Tensor out = native::cat(tensors, dim);
  if (any_needs_grad(tensors)) {
    // Each input gets back its own stretch of the gradient along dim.
    std::int64_t d = wrap_dim(dim, out.dim());
    std::vector<std::int64_t> lengths;
    for (const Tensor& t : tensors) {
      // PyTorch skips legacy empty 1-D tensors in cat; they get no gradient.
      bool skipped = t.dim() == 1 && t.numel() == 0 && out.dim() != 1;
      lengths.push_back(skipped ? -1 : t.size(d));
    }
    auto node = record("CatBackward0", tensors, out);
    node->set_backward([d, lengths](Node& n, const TensorList& grads) -> TensorList {
      TensorList result;
      std::int64_t offset = 0;
      for (std::size_t i = 0; i < lengths.size(); ++i) {
        if (lengths[i] < 0 || !n.needs_input_grad(i)) {
          result.emplace_back();
        } else {
          result.push_back(ember::narrow(grads[0], d, offset, lengths[i]));
        }
        offset += std::max<std::int64_t>(lengths[i], 0);
      }
      return result;
    });
  }
  return out;
}

Tensor stack(const std::vector<Tensor>& tensors, std::int64_t dim) {
  EMBER_RECORD_FUNCTION("stack", tensors);
  Tensor out = native::stack(tensors, dim);
  if (any_needs_grad(tensors)) {
    std::int64_t d = wrap_dim(dim, out.dim());
    std::size_t count = tensors.size();
    auto node = record("StackBackward0", tensors, out);
    node->set_backward([d, count](Node& n, const TensorList& grads) -> TensorList {
      TensorList result;
      for (std::size_t i = 0; i < count; ++i) {
        result.push_back(n.needs_input_grad(i) ? ember::select(grads[0], d, static_cast<std::int64_t>(i)) : Tensor());
      }
      return result;
    });
  }
  return out;
}

Tensor index_select(const Tensor& self, std::int64_t dim, const Tensor& index) {
  EMBER_RECORD_FUNCTION("index_select", self, index);
  Tensor out = native::index_select(self, dim, index);
  if (needs_grad(self)) {
    // A row picked twice gets both gradients: index_add sums them.
    Shape sizes = self.sizes();
    auto node = record("IndexSelectBackward0", {self}, out);
    node->save("index", index);
    node->set_backward([sizes, dim](Node& n, const TensorList& grads) -> TensorList {
      return {ember::index_add(zeros(sizes, grads[0].options()), dim, n.saved(0), grads[0])};
    });
  }
  return out;
}

Tensor index_add(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& source) {
  EMBER_RECORD_FUNCTION("index_add", self, index, source);
  Tensor out = native::index_add(self, dim, index, source);
  if (needs_grad(self, source)) {
    auto node = record("IndexAddBackward0", {self, source}, out);
    node->save("index", index);
    Shape source_sizes = source.sizes();
    node->set_backward([dim, source_sizes](Node& n, const TensorList& grads) -> TensorList {
      const Tensor& g = grads[0];
      Tensor grad_source;
      if (n.needs_input_grad(1)) {
        // A 0-d source (self 1-D, index of one element) reads back as one element.
        grad_source = ember::reshape(ember::index_select(g, dim, n.saved(0)), source_sizes);
      }
      return {n.needs_input_grad(0) ? g : Tensor(), grad_source};
    });
  }
  return out;
}

Tensor gather(const Tensor& self, std::int64_t dim, const Tensor& index) {
  EMBER_RECORD_FUNCTION("gather", self, index);
  Tensor out = native::gather(self, dim, index);
  if (needs_grad(self)) {
    Shape sizes = self.sizes();
    auto node = record("GatherBackward0", {self}, out);
    node->save("index", index);
    node->set_backward([sizes, dim](Node& n, const TensorList& grads) -> TensorList {
      return {ember::scatter_add(zeros(sizes, grads[0].options()), dim, n.saved(0), grads[0])};
    });
  }
  return out;
}

Tensor scatter_add(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& source) {
  EMBER_RECORD_FUNCTION("scatter_add", self, index, source);
  Tensor out = native::scatter_add(self, dim, index, source);
  if (needs_grad(self, source)) {
    auto node = record("ScatterAddBackward0", {self, source}, out);
    node->save("index", index);
    node->set_backward([dim](Node& n, const TensorList& grads) -> TensorList {
      const Tensor& g = grads[0];
      return {n.needs_input_grad(0) ? g : Tensor(),
              n.needs_input_grad(1) ? ember::gather(g, dim, n.saved(0)) : Tensor()};
    });
  }
  return out;
}

Tensor one_hot(const Tensor& self, std::int64_t num_classes) {
  EMBER_RECORD_FUNCTION("one_hot", self);
  return native::one_hot(self, num_classes);
}

}  // namespace ember
