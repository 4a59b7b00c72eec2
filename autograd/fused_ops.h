// autograd/fused_ops.h — differentiable entry points that exist only to fuse work on the
// training path; everything else fused is reached through the ordinary ops (relu's
// backward, cross_entropy, optim::SGD) and needs no declaration of its own.
//
// Issue 8 ("bias + ReLU"): nn::Sequential runs Linear followed by ReLU as addmm and then
// one in-place ReLU pass over addmm's still-hot output (nn/linear.cpp, Linear::forward_relu),
// recording exactly PyTorch's tape: AddmmBackward0 (saving mat1, mat2) then ReluBackward0
// (saving the result); Conv2d followed by ReLU likewise (nn/conv.cpp, Conv2d::forward_relu:
// ConvolutionBackward0 saves the input and the weight). docs/performance.md ("Fused ops").
#pragma once

#include <ember/core/tensor.h>

namespace ember {

// relu(fresh), computed in place over fresh's storage; records ReluBackward0 with fresh as
// its input (fresh keeps its own grad_fn, e.g. AddmmBackward0). Only for a tensor nobody
// else reads afterwards: just produced by an op that did not save its output, with no
// other handle on its storage. Defined in autograd/elementwise_ops.cpp.
Tensor relu_of_fresh(const Tensor& fresh);

}  // namespace ember
