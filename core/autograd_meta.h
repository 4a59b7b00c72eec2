// core/autograd_meta.h — the autograd fields a Tensor carries, and the grad-mode flag.
//
// Core only *stores* these; autograd/ gives them meaning. A tensor that never meets
// autograd has no AutogradMeta at all (a null pointer), so plain tensor code pays nothing.
// GradFn is the base class of autograd's graph nodes (autograd/node.h): core needs only
// its name, to print `grad_fn=<AddmmBackward0>`.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <ember/core/tensor.h>

namespace ember {

class GradFn {
 public:
  virtual ~GradFn() = default;
  virtual std::string name() const = 0;  // "AddmmBackward0"
};

struct AutogradMeta {
  bool requires_grad = false;
  Tensor grad;                        // accumulated gradient of a leaf (or a retained non-leaf)
  std::shared_ptr<GradFn> grad_fn;    // the node that produced this tensor; null for leaves
  std::uint32_t output_nr = 0;        // which output of grad_fn this tensor is
  bool retains_grad = false;
  std::vector<TensorHook> hooks;
  std::vector<PostAccumulateGradHook> post_accumulate_hooks;
  std::string name;                   // optional label for the graph inspector
  // For leaves: the node that accumulates into .grad, created once and shared by every
  // graph the leaf takes part in (autograd/accumulate_grad.h). Type-erased here.
  std::weak_ptr<GradFn> grad_accumulator;
};

// Grad mode (PyTorch: torch.is_grad_enabled). Thread-local: a NoGradGuard in one thread
// does not switch off recording in another (autograd/grad_mode.h has the guard).
bool is_grad_enabled();
void set_grad_enabled(bool enabled);

}  // namespace ember
