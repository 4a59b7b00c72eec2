// nn/parameter.cpp — nn::Parameter (see parameter.h).
#include <ember/nn/parameter.h>

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

}  // namespace ember::nn
