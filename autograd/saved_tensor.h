// autograd/saved_tensor.h — a tensor a graph node keeps for its backward formula.
//
// Tutorial §4. MulBackward0 needs both factors; SigmoidBackward0 needs its own output.
// Saving never copies data: a SavedTensor holds a handle on the same storage plus the
// storage's version counter *at save time*. If someone modifies that storage in place
// before backward runs, the versions differ and unpack() refuses with PyTorch's message,
// because the formula would silently use the wrong numbers.
//
// A node's own output is saved without its autograd fields (the output points at the node,
// so keeping the full handle would make a reference cycle); unpack() rebuilds a handle
// whose grad_fn is the node again, which is what lets create_graph differentiate through it.
//
// The same cycle appears when an in-place op saves its own target: h.mul_(h) saves `other`
// (which is h), then h's history is rebased onto the saving node. Such a tensor is saved
// with hold_weakly: a bare alias for the data and version, and only a weak handle on the
// original (used to name its producer in the version error, which is the only outcome: the
// in-place write always bumps the saved version).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <ember/core/tensor.h>

namespace ember::autograd {

class Node;

class SavedTensor {
 public:
  SavedTensor() = default;
  // is_output: `tensor` is an output of the node that saves it (see above).
  // hold_weakly: `tensor` is the target of the in-place op that saves it (see above).
  SavedTensor(const Tensor& tensor, bool is_output, std::string name, bool hold_weakly = false);

  // The saved value, checked against in-place modification. `owner` is the node asking
  // (needed to rebuild a saved output's grad_fn). Throws AutogradError after release().
  Tensor unpack(const std::shared_ptr<Node>& owner) const;
  // Frees the reference (after backward without retain_graph).
  void release() { data_ = Tensor(); released_ = true; }
  bool was_released() const { return released_; }

  const std::string& name() const { return name_; }
  bool is_output() const { return is_output_; }
  std::uint64_t saved_version() const { return saved_version_; }
  // The raw handle, for the graph inspector (no checks; undefined once released).
  const Tensor& peek() const { return data_; }

 private:
  Tensor data_;
  std::weak_ptr<TensorImpl> weak_original_;  // set only when held weakly
  bool held_weakly_ = false;
  std::uint64_t saved_version_ = 0;
  bool is_output_ = false;
  bool released_ = false;
  bool defined_ = false;   // saving an undefined tensor is allowed (optional inputs)
  bool requires_grad_ = false;
  std::uint32_t output_nr_ = 0;
  std::string name_;
};

}  // namespace ember::autograd
