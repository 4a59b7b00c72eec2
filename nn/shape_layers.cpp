// nn/shape_layers.cpp — Flatten (see shape_layers.h).
#include <ember/nn/shape_layers.h>

#include <ember/autograd/grad_mode.h>
#include <ember/autograd/ops.h>

namespace ember::nn {

Flatten::Flatten(std::int64_t start_dim, std::int64_t end_dim) : start_dim(start_dim), end_dim(end_dim) {}

Tensor Flatten::forward(const Tensor& input) { return input.flatten(start_dim, end_dim); }

std::string Flatten::extra_repr() const { return make_message("start_dim=", start_dim, ", end_dim=", end_dim); }

}  // namespace ember::nn
