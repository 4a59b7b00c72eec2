// core/autograd_meta.h — the autograd fields a Tensor carries, and the grad-mode flag.
//
// Core only *stores* these; autograd/ gives them meaning. A tensor that never meets
// autograd has no AutogradMeta at all (a null pointer), so plain tensor code pays nothing.
// GradFn is the base class of autograd's graph nodes (autograd/node.h): core needs only
// its name, to print `grad_fn=<AddmmBackward0>`.
#pragma once

#include <atomic>
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
  AutogradMeta() noexcept {}  // NOLINT(modernize-use-equals-default): no zero fill first, as TensorImpl's
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

  // ---- views (autograd/view_tracking.h gives these meaning)
  // A floating tensor made by a differentiable view op (view, select, slice, t, ...) shares
  // its base's memory; an in-place write through either must reach the other's history.
  bool is_view = false;
  // Made with grad mode off: PyTorch forbids modifying it in place with grad mode on.
  bool view_created_in_no_grad = false;
  // The tensor that owns the memory (never itself a view: a view of a view records the
  // first base). Undefined only for a no-grad view whose base did not require grad then.
  Tensor view_base;
  // The storage version when grad_fn was last set. When an in-place write (to the base or
  // to any view of it) moves the version on, grad_fn is stale and is rebuilt on access.
  std::uint64_t view_version = 0;
};

// Set by autograd when it records a view: rebuilds a stale view's grad_fn from its base
// (Tensor::grad_fn calls it when view_version is behind the storage's version). A function
// pointer, so that core does not depend on autograd; atomic, because views are made on any
// thread (DataLoader workers index their data set).
using RefreshViewGradFn = void (*)(const Tensor& view);
inline std::atomic<RefreshViewGradFn> refresh_view_grad_fn{nullptr};

// Grad mode (PyTorch: torch.is_grad_enabled). Thread-local: a NoGradGuard in one thread
// does not switch off recording in another (autograd/grad_mode.h has the guard). Read inline:
// every op asks, several times a call (constinit: no per-thread initialisation to check).
namespace detail {
constinit inline thread_local bool grad_mode_enabled = true;
}  // namespace detail
inline bool is_grad_enabled() { return detail::grad_mode_enabled; }
inline void set_grad_enabled(bool enabled) { detail::grad_mode_enabled = enabled; }

}  // namespace ember
