// data/collate.h — turning a list of examples into one batch (PyTorch: default_collate).
//
// Tutorial §6's batches print as tensor([[ 2.3000, -1.1000], [-0.9000, 2.9000]]) tensor([1, 0]):
// the features of the chosen examples stacked along a new first dimension, and the labels
// (0-d tensors) stacked into a 1-D tensor. Shapes must agree: stack's error otherwise.
#pragma once

#include <functional>
#include <vector>

#include <ember/data/dataset.h>

namespace ember::data {

// Stacks every example's data, and every example's target, along a new dim 0.
Example default_collate(const std::vector<Example>& examples);

using CollateFunction = std::function<Example(const std::vector<Example>&)>;

}  // namespace ember::data
