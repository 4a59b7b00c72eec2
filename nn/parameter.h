// nn/parameter.h — nn::Parameter: a Tensor that a Module owns and an optimizer updates.
//
// Tutorial §5: print(model.layers[0].weight) shows
//   Parameter containing:
//   tensor([[-0.0577,  0.0047, ...]], requires_grad=True)
// In PyTorch, Parameter is a Tensor subclass whose only differences are that it defaults
// to requires_grad=True, that assigning it to a Module attribute registers it, and that it
// prints with that first line. ember's Parameter is likewise a Tensor (same handle, no
// extra data), with its own operator<< for the header line; registration is explicit
// (Module::register_parameter), as in libtorch.
#pragma once

#include <ostream>
#include <vector>

#include <ember/core/tensor.h>

namespace ember::nn {

class Parameter : public Tensor {
 public:
  Parameter() = default;
  // Shares `data`'s handle and switches requires_grad on (unless told otherwise).
  explicit Parameter(const Tensor& data, bool requires_grad = true);
};

// "Parameter containing:\n" followed by the tensor's usual repr.
std::ostream& operator<<(std::ostream& out, const Parameter& parameter);

// The one zero_grad behind Module::zero_grad and optim::Optimizer::zero_grad (PyTorch has
// the same loop in both; ember keeps it once). For each parameter with a .grad:
// set_to_none = true (PyTorch 2.x default): .grad becomes undefined, so the next backward
// writes it fresh without an add. false: .grad is cut from any graph (detach_, as a
// create_graph backward leaves it with a grad_fn) and zeroed in place.
void zero_grad(const std::vector<Tensor>& parameters, bool set_to_none = true);

}  // namespace ember::nn
