// autograd/graph_inspector.h — looking at the tape: Graphviz DOT and a terminal dump.
//
// Tutorial §4 draws the computation graph of the logistic-regression example; to_dot
// produces the same picture for any tensor:
//   std::ofstream("graph.dot") << ember::autograd::to_dot(loss);   // then: dot -Tpng graph.dot
// Boxes are nodes (grad_fn names), notes hang off them for every saved tensor (name,
// shape, strides, dtype, version; "freed" after backward), ellipses are leaves
// (AccumulateGrad, labelled with the leaf's name and shape). dump() prints the same graph
// as an indented tree for the terminal (indentation stops growing 32 levels down, so a very
// deep graph stays readable and small).
#pragma once

#include <string>

#include <ember/core/tensor.h>

namespace ember::autograd {

std::string to_dot(const Tensor& root);
std::string dump(const Tensor& root);

}  // namespace ember::autograd
