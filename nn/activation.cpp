// nn/activation.cpp — ReLU, Sigmoid, Tanh, GELU, SiLU modules (see activation.h).
#include <ember/nn/activation.h>

#include <utility>

#include <ember/autograd/grad_mode.h>
#include <ember/autograd/ops.h>

namespace ember::nn {

Tensor ReLU::forward(const Tensor& input) { return ember::relu(input); }
Tensor Sigmoid::forward(const Tensor& input) { return ember::sigmoid(input); }
Tensor Tanh::forward(const Tensor& input) { return ember::tanh(input); }

GELU::GELU(std::string approximate) : approximate_(std::move(approximate)) {
  EMBER_CHECK(approximate_ == "none" || approximate_ == "tanh", ValueError,
              "approximate argument must be either none or tanh.");
}
Tensor GELU::forward(const Tensor& input) { return ember::gelu(input, approximate_); }
std::string GELU::extra_repr() const { return "approximate='" + approximate_ + "'"; }

Tensor SiLU::forward(const Tensor& input) { return ember::silu(input); }

}  // namespace ember::nn
