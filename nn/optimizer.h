// nn/optimizer.h — optim::Optimizer: the base of SGD, Adam and AdamW (PyTorch: torch.optim).
//
// Tutorial §7: "optimizer.step() ... uses the gradients to update the model parameters in
// order to minimize the loss", and "it is important to include an optimizer.zero_grad()
// call in each update round to reset the gradients to zero." An optimizer holds handles
// to the parameters (the same tensors the model holds, so updating them in place updates
// the model) and, per parameter, named state tensors (SGD's momentum_buffer, Adam's
// exp_avg / exp_avg_sq / step).
//
// state_dict() flattens that state to "state.<parameter index>.<name>" -> tensor, so it can
// be saved with ember::save like a model's; load_state_dict() restores it (the
// hyper-parameters are the constructor's, as when you rebuild the optimizer in PyTorch).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <ember/core/tensor.h>
#include <ember/nn/module.h>
#include <ember/nn/ordered_dict.h>

namespace ember::optim {

using nn::StateDict;

class Optimizer {
 public:
  // "optimizer got an empty parameter list" for an empty list.
  explicit Optimizer(std::vector<Tensor> parameters);
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // One update of every parameter that has a gradient (parameters without one are skipped).
  virtual void step() = 0;
  // set_to_none = true (PyTorch 2.x default): .grad becomes undefined, so the next backward
  // writes it fresh; false: the existing gradient tensors are zeroed in place.
  void zero_grad(bool set_to_none = true);

  const std::vector<Tensor>& parameters() const { return parameters_; }
  virtual double learning_rate() const = 0;
  virtual void set_learning_rate(double lr) = 0;

  StateDict state_dict() const;
  // Checks every key ("state.<i>.<name>" with i a valid parameter index) and shape:
  // "loaded state dict contains a parameter group that doesn't match the size of
  // optimizer's group" style errors, naming the key.
  void load_state_dict(const StateDict& state);

 protected:
  // The named state of parameter i (created empty on first use).
  nn::OrderedDict<Tensor>& state_of(std::size_t i) { return state_[i]; }

  std::vector<Tensor> parameters_;
  std::vector<nn::OrderedDict<Tensor>> state_;
};

}  // namespace ember::optim
