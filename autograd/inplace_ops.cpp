// autograd/inplace_ops.cpp — the in-place Tensor methods: add_, sub_, mul_, div_, copy_,
// fill_, zero_ (and through them +=, -=, *=, /=).
//
// Tutorial §4–§5 (optimizer steps run `p -= lr * p.grad` under no_grad). Three autograd
// duties come with modifying a tensor in place:
//   1. refuse it on a leaf that requires grad while recording (PyTorch's message), since
//      the leaf's value is what its gradient is about;
//   2. the storage's version counter goes up (native's in-place kernels do it), so a node
//      that saved this data notices at backward time (saved_tensor.h);
//   3. when recording, "rebase" the tensor's history: it becomes the output of a new node
//      whose first edge leads to where its gradient used to go.
// When self is a view, step 3 rewrites its base's history instead (CopySlices), and the
// views of a tensor written in place rebuild their grad_fn on next use: view_tracking.h,
// and docs/autograd.md for the whole story.
#include <ember/autograd/function.h>
#include <ember/autograd/ops.h>
#include <ember/core/factories.h>
#include <ember/core/native.h>

namespace ember {

using autograd::Node;
using autograd::TensorList;

namespace {

Tensor wrap(Scalar value, const Tensor& like) { return scalar_to_tensor(value, like.device()); }

// Records `name` as the new producer of self (modified in place) with inputs {self, other}.
std::shared_ptr<Node> record_inplace(const std::string& name, const Tensor& self, const Tensor& other) {
  auto node = std::make_shared<Node>(name);
  node->add_next_edge(self.requires_grad() ? autograd::gradient_edge(self) : autograd::Edge{});
  node->add_next_edge(other.defined() && other.requires_grad() ? autograd::gradient_edge(other) : autograd::Edge{});
  return node;
}

// The shared shape of add_/sub_/mul_/div_: check, maybe keep the old value, run the kernel,
// bump the version, record.
template <class Kernel, class Formula>
Tensor& inplace_binary(Tensor& self, const Tensor& other, const std::string& name, bool needs_old_self, Kernel kernel,
                       Formula formula) {
  bool record = autograd::needs_grad(self, other);
  autograd::check_inplace(self, record);
  // mul_/div_ need self's value *before* the op for other's gradient: copy it first —
  // with ember::clone, so the copy keeps self's old history (second derivatives need it).
  Tensor old_self = record && needs_old_self && other.requires_grad() ? ember::clone(self) : Tensor();
  std::shared_ptr<Node> node;
  if (record) {
    // The node is built *before* the write: its edges must lead to self's old history, and
    // `other` is saved at its current version — so x.mul_(x) is caught at backward, as in
    // PyTorch, because the write changes the saved `other` too.
    node = record_inplace(name, self, other);
    if (other.is_same(self)) {
      node->save_inplace_target("other", other);  // self's history is about to point here
    } else {
      node->save("other", other);
    }
    node->save("self", old_self);
    Shape other_sizes = other.sizes();
    node->set_backward([formula, other_sizes](Node& n, const TensorList& grads) -> TensorList {
      return formula(n, grads[0], n.saved(0), n.saved(1), other_sizes);
    });
  }
  kernel();  // native's in-place kernels bump the version counter themselves
  if (node) autograd::rebase_history(self, node);
  return self;
}

}  // namespace

Tensor& Tensor::add_(const Tensor& other, Scalar alpha) {
  return inplace_binary(*this, other, "AddBackward0", false, [&] { native::add_(*this, other, alpha); },
                        [alpha](Node& n, const Tensor& g, const Tensor&, const Tensor&, const Shape& sizes) -> TensorList {
                          return {n.needs_input_grad(0) ? g : Tensor(),
                                  n.needs_input_grad(1) ? sum_to(g * alpha, sizes) : Tensor()};
                        });
}
Tensor& Tensor::add_(Scalar other) { return add_(wrap(other, *this)); }

Tensor& Tensor::sub_(const Tensor& other, Scalar alpha) {
  return inplace_binary(*this, other, "SubBackward0", false, [&] { native::sub_(*this, other, alpha); },
                        [alpha](Node& n, const Tensor& g, const Tensor&, const Tensor&, const Shape& sizes) -> TensorList {
                          return {n.needs_input_grad(0) ? g : Tensor(),
                                  n.needs_input_grad(1) ? sum_to(-(g * alpha), sizes) : Tensor()};
                        });
}
Tensor& Tensor::sub_(Scalar other) { return sub_(wrap(other, *this)); }

Tensor& Tensor::mul_(const Tensor& other) {
  return inplace_binary(*this, other, "MulBackward0", true, [&] { native::mul_(*this, other); },
                        [](Node& n, const Tensor& g, const Tensor& other, const Tensor& old_self,
                           const Shape& sizes) -> TensorList {
                          return {n.needs_input_grad(0) ? g * other : Tensor(),
                                  n.needs_input_grad(1) ? sum_to(g * old_self, sizes) : Tensor()};
                        });
}
Tensor& Tensor::mul_(Scalar other) { return mul_(wrap(other, *this)); }

Tensor& Tensor::div_(const Tensor& other) {
  return inplace_binary(*this, other, "DivBackward0", true, [&] { native::div_(*this, other); },
                        [](Node& n, const Tensor& g, const Tensor& other, const Tensor& old_self,
                           const Shape& sizes) -> TensorList {
                          return {n.needs_input_grad(0) ? g / other : Tensor(),
                                  n.needs_input_grad(1) ? sum_to(-g * old_self / (other * other), sizes) : Tensor()};
                        });
}
Tensor& Tensor::div_(Scalar other) { return div_(wrap(other, *this)); }

Tensor& Tensor::copy_(const Tensor& source) {
  bool record = autograd::needs_grad(*this, source);
  autograd::check_inplace(*this, record);
  std::shared_ptr<Node> node;
  if (record) {
    // Built before the write, so its first edge is self's history before it (for a view,
    // taken before the write makes its grad_fn stale).
    // The old value is overwritten: no gradient flows to it. The source gets the gradient,
    // summed over broadcast dims and cast back to its dtype.
    node = record_inplace("CopyBackwards", *this, source);
    Shape source_sizes = source.sizes();
    DType source_dtype = source.dtype();
    node->set_backward([source_sizes, source_dtype](Node& n, const TensorList& grads) -> TensorList {
      return {n.needs_input_grad(0) ? zeros_like(grads[0]) : Tensor(),
              n.needs_input_grad(1) ? ember::to(sum_to(grads[0], source_sizes), source_dtype) : Tensor()};
    });
  }
  native::copy_(*this, source);  // bumps the version counter
  if (node) autograd::rebase_history(*this, node);
  return *this;
}

// fill_ and zero_ overwrite every element with a constant: no gradient reaches the old
// value. The node has a single edge (self's old history), as PyTorch's, and PyTorch's name:
// FillBackward2 is fill_ with a number (FillBackward0/1 are the out-of-place torch.fill),
// ZeroBackward0 is zero_.
static Tensor& fill_recorded(Tensor& self, Scalar value, const char* name) {
  bool record = autograd::needs_grad(self);
  autograd::check_inplace(self, record);
  std::shared_ptr<Node> node;
  if (record) {  // built before the write, as in copy_
    node = std::make_shared<Node>(name);
    node->add_next_edge(autograd::gradient_edge(self));
    node->set_backward([](Node&, const TensorList& grads) -> TensorList { return {zeros_like(grads[0])}; });
  }
  native::fill_(self, value);  // bumps the version counter
  if (node) autograd::rebase_history(self, node);
  return self;
}

Tensor& Tensor::fill_(Scalar value) { return fill_recorded(*this, value, "FillBackward2"); }
Tensor& Tensor::zero_() { return fill_recorded(*this, 0, "ZeroBackward0"); }

}  // namespace ember
