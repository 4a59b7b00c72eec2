// nn/parameter.cpp — nn::Parameter (see parameter.h).
#include <ember/nn/parameter.h>

#include <ember/autograd/grad_mode.h>
#include <ember/core/print.h>

namespace ember::nn {

Parameter::Parameter(const Tensor& data, bool requires_grad) : Tensor(data) {
  // Only a floating tensor can require grad; PyTorch's Parameter(int_tensor) raises
  // the same error that requires_grad_ raises, so leave integer tensors alone when off.
  if (defined() && (requires_grad || this->requires_grad())) requires_grad_(requires_grad);
}

std::ostream& operator<<(std::ostream& out, const Parameter& parameter) {
  return out << "Parameter containing:\n" << static_cast<const Tensor&>(parameter);
}

void zero_grad(const std::vector<Tensor>& parameters, bool set_to_none) {
  for (Tensor parameter : parameters) {  // a handle: .grad lives in the shared autograd metadata
    if (!parameter.grad().defined()) continue;
    Tensor& grad = parameter.mutable_grad();
    if (set_to_none) {
      grad = Tensor();
      continue;
    }
    // PyTorch: grad.detach_() when it has a grad_fn, else requires_grad_(False); then zero_().
    if (grad.grad_fn() != nullptr) {
      grad.detach_();
    } else if (grad.requires_grad()) {
      grad.requires_grad_(false);
    }
    NoGradGuard no_grad;
    grad.zero_();
  }
}

}  // namespace ember::nn
