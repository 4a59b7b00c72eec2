// autograd/engine.h — replaying the tape backwards: backward() and grad().
//
// Tutorial §4. Given output tensors and the gradients w.r.t. them, the engine
//   1. finds every node reachable from the outputs' grad_fns and counts, for each, how
//      many edges point at it (its dependencies);
//   2. starts with the outputs' nodes and runs a node only when all the gradients that
//      will ever arrive for it have arrived (dependency count reaches zero): that is a
//      reverse topological order, so each node runs exactly once;
//   3. adds up the gradients arriving at the same input slot (a tensor used twice gets the
//      sum of both contributions);
//   4. frees each node's saved tensors once it has run, unless retain_graph.
// backward() lets AccumulateGrad nodes add into the leaves' .grad(); grad() instead
// captures the gradients flowing into the requested inputs and returns them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <ember/autograd/node.h>

namespace ember::autograd {

// torch.autograd.backward. grad_tensors[i] may be undefined for a one-element tensors[i]
// (implicit 1). retain_graph defaults to create_graph.
void backward(const TensorList& tensors, const TensorList& grad_tensors = {},
              std::optional<bool> retain_graph = std::nullopt, bool create_graph = false);

// torch.autograd.grad: the gradients of `outputs` w.r.t. `inputs`, without touching any
// .grad(). allow_unused: an input the outputs do not depend on gets an undefined tensor
// instead of an error.
TensorList grad(const TensorList& outputs, const TensorList& inputs, const TensorList& grad_outputs = {},
                std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
                bool allow_unused = false);

// The device half of checking a gradient a backward formula returned for input slot
// `index` of node `function` (PyTorch's validate_outputs): a gradient on another device
// than the input it belongs to is a bug in the formula — DeviceError "Function
// MulBackward0 returned an invalid gradient at index 0 - expected device cpu but got
// cuda:0" — except a 0-d one, which is moved. Returns true when the gradient (of `dim`
// dims, on `got`) must be moved to `expected`. Declared here so it is testable with Device
// values alone (a CUDA tensor is not needed to show the rule).
bool gradient_needs_device_move(const std::string& function, std::size_t index, Device expected, Device got,
                                std::int64_t dim);

}  // namespace ember::autograd
