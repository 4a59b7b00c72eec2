// nn/activation.cpp — ReLU, Sigmoid, Tanh modules (see activation.h).
#include <ember/nn/activation.h>

#include <ember/autograd/grad_mode.h>
#include <ember/autograd/ops.h>

namespace ember::nn {

Tensor ReLU::forward(const Tensor& input) { return ember::relu(input); }
Tensor Sigmoid::forward(const Tensor& input) { return ember::sigmoid(input); }
Tensor Tanh::forward(const Tensor& input) { return ember::tanh(input); }

}  // namespace ember::nn
