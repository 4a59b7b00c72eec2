// nn/optimizer.h — optim::Optimizer: the base of SGD, Adam and AdamW (PyTorch: torch.optim).
//
// Tutorial §7: "optimizer.step() ... uses the gradients to update the model parameters in
// order to minimize the loss", and "it is important to include an optimizer.zero_grad()
// call in each update round to reset the gradients to zero." An optimizer holds handles
// to the parameters (the same tensors the model holds, so updating them in place updates
// the model) and, per parameter, named state tensors (SGD's momentum_buffer, Adam's
// exp_avg / exp_avg_sq / step).
//
// state_dict() is PyTorch's {"state": ..., "param_groups": [...]} flattened by dots, all
// tensors, so it saves with ember::save like a model's:
//   state.<parameter index>.<name>   the per-parameter state (state.0.exp_avg, ...)
//   param_groups.0.<hyper-parameter>  lr, betas, eps, weight_decay, momentum, ... as 0-d
//                                     float64 / bool tensors (betas: a float64 pair)
//   param_groups.0.params             the parameter indices [0, 1, ..., n-1] (int64)
// load_state_dict() restores both, as PyTorch does: the saved hyper-parameters replace the
// constructor's (a checkpoint without param_groups keeps them). It checks everything first
// — known names, complete state per parameter, shapes, the group's size — and throws one
// ValueError listing every problem, changing nothing; loaded tensors move to their
// parameter's device and (floating) dtype.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <ember/core/tensor.h>
#include <ember/nn/module.h>
#include <ember/nn/ordered_dict.h>

namespace ember::optim {

using nn::StateDict;

// Reads the hyper-parameters of one saved parameter group for load_state_dict, collecting
// problems instead of throwing so that one error can list them all.
class GroupReader {
 public:
  GroupReader(const StateDict& group, std::string key_prefix);
  double number(const std::string& name);                   // a 0-d real number
  bool flag(const std::string& name);                       // a 0-d bool
  std::pair<double, double> pair(const std::string& name);  // two real numbers (betas)
  // A value the optimizer rejects (its constructor's message).
  void reject(const std::string& problem) { problems_.push_back(problem); }
  // Nothing missing, malformed or rejected so far: the values read may be applied.
  bool ok() const { return missing_.empty() && problems_.empty(); }
  // The last step of every load_hyperparameters: when everything read so far is fine, runs
  // the optimizer's own check (its constructor's) on the loaded options; true when they may
  // be applied, else the check's message is recorded as rejected.
  template <class Options, class Check>
  bool accept(const Options& loaded, Check check) {
    if (!ok()) return false;
    try {
      check(loaded);
    } catch (const ValueError& error) {
      reject(error.what());
      return false;
    }
    return true;
  }

  // For load_state_dict: names never read are unexpected.
  std::vector<std::string> unread_keys() const;
  const std::vector<std::string>& missing_keys() const { return missing_; }
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  const Tensor* find(const std::string& name);
  const StateDict& group_;
  std::string prefix_;
  std::vector<std::string> read_;
  std::vector<std::string> missing_;
  std::vector<std::string> problems_;
};

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
  // writes it fresh; false: the existing gradient tensors are detached and zeroed in place.
  // The same function as Module::zero_grad (nn::zero_grad, nn/parameter.h).
  void zero_grad(bool set_to_none = true);

  const std::vector<Tensor>& parameters() const { return parameters_; }
  virtual double learning_rate() const = 0;
  virtual void set_learning_rate(double lr) = 0;
  // The class name PyTorch prints ("SGD", "Adam", "AdamW"), used in error messages.
  virtual std::string name() const = 0;

  // The momentum a learning-rate schedule may cycle (OneCycleLR, nn/lr_one_cycle.h):
  // PyTorch's param_group["momentum"] (SGD) or param_group["betas"][0] (Adam, AdamW:
  // uses_betas). has_momentum() is false for an optimizer with neither.
  virtual bool has_momentum() const { return false; }
  virtual bool uses_betas() const { return false; }
  virtual double momentum() const { return 0.0; }
  virtual void set_momentum(double) {}

  // PyTorch's param_group["initial_lr"]: the lr before any scheduler changed it. The first
  // learning-rate scheduler built on this optimizer sets it, later ones read it (so a
  // SequentialLR's schedules share one base lr, as in PyTorch). Not in state_dict: each
  // scheduler's own state_dict keeps its base_lrs.
  std::optional<double> initial_lr;

  StateDict state_dict() const;
  void load_state_dict(const StateDict& state);

 protected:
  // What one parameter's state holds once it has any: load_state_dict requires all of
  // these names (no more) for every parameter that has state. A scalar slot is 0-d and
  // keeps its dtype and device (PyTorch's `step`); any other has the parameter's shape and
  // is moved to the parameter's device and floating dtype.
  struct StateSlot {
    std::string name;
    bool scalar = false;
  };
  virtual std::vector<StateSlot> state_slots() const = 0;
  // The parameter group's hyper-parameters by PyTorch's names, in PyTorch's order.
  virtual StateDict hyperparameters() const = 0;
  // Reads every hyper-parameter from `group` and applies them only if group.ok() after
  // the optimizer's own checks (report those with group.reject).
  virtual void load_hyperparameters(GroupReader& group) = 0;

  // The named state of parameter i (created empty on first use).
  nn::OrderedDict<Tensor>& state_of(std::size_t i) { return state_[i]; }

  std::vector<Tensor> parameters_;
  std::vector<nn::OrderedDict<Tensor>> state_;
};

// Hyper-parameters as state_dict tensors: 0-d float64, 0-d bool, and a float64 pair.
Tensor hyperparameter_tensor(double value);
Tensor hyperparameter_tensor(bool value);
Tensor hyperparameter_tensor(double first, double second);

}  // namespace ember::optim
