// nn/optimizer.h — optim::Optimizer: the base of SGD, Adam and AdamW (PyTorch: torch.optim).
//
// Tutorial §7: "optimizer.step() ... uses the gradients to update the model parameters in
// order to minimize the loss", and "it is important to include an optimizer.zero_grad()
// call in each update round to reset the gradients to zero." An optimizer holds handles
// to the parameters (the same tensors the model holds, so updating them in place updates
// the model) and, per parameter, named state tensors (SGD's momentum_buffer, Adam's
// exp_avg / exp_avg_sq / step).
//
// Parameter groups (PyTorch's param_groups; libtorch's OptimizerParamGroup): the parameters
// may come as a list of ParamGroup, each with its own hyper-parameters; what a group leaves
// unset comes from the options given to the constructor (the defaults), as a Python dict
// without that key does. nanoGPT's configure_optimizers, in ember:
//   optim::AdamW optimizer({{.params = matrices, .weight_decay = 0.1},      // dim >= 2
//                           {.params = biases_and_norms, .weight_decay = 0.0}},
//                          {.lr = 6e-4, .beta1 = 0.9, .beta2 = 0.95});
// A plain parameter list is one group with the constructor's options. Parameters are
// numbered across groups in order (group 0's first): that is the index in state_dict's
// state.<i> and in parameters().
//
// state_dict() is PyTorch's {"state": ..., "param_groups": [...]} flattened by dots, all
// tensors, so it saves with ember::save like a model's:
//   state.<parameter index>.<name>   the per-parameter state (state.0.exp_avg, ...)
//   param_groups.<g>.<hyper-parameter>  group g's lr, betas, eps, weight_decay, momentum, ...
//                                       as 0-d float64 / bool tensors (betas: a float64 pair)
//   param_groups.<g>.params             the indices of group g's parameters (int64), counted
//                                       on from the previous group's: [0, 1], [2, 3, 4], ...
// load_state_dict() restores both, as PyTorch does: the saved hyper-parameters replace the
// constructor's (a checkpoint without param_groups keeps them). It checks everything first
// — known names, complete state per parameter, shapes, the number of groups and each
// group's size (PyTorch's messages) — and throws one
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

// One parameter group: its parameters and the hyper-parameters it sets itself (PyTorch's
// {"params": [...], "lr": ...} dict). Unset fields take the optimizer's constructor options.
// One struct for every optimizer, like the Python dict; a field the optimizer does not have
// (momentum for Adam, beta1 for SGD) is refused with a ValueError rather than silently
// ignored. The order is SGD's and Adam's argument order merged, for designated initializers.
// Every hyper-parameter is optional (unset: the optimizer's default); the {} initializers let
// designated initializers name only some fields without -Wmissing-field-initializers.
struct ParamGroup {
  std::vector<Tensor> params;
  std::optional<double> lr{};
  std::optional<double> momentum{};   // SGD
  std::optional<double> dampening{};  // SGD
  std::optional<double> beta1{};      // Adam, AdamW (PyTorch's betas[0])
  std::optional<double> beta2{};      // Adam, AdamW (betas[1])
  std::optional<double> eps{};        // Adam, AdamW
  std::optional<double> weight_decay{};
  std::optional<bool> nesterov{};  // SGD
  std::optional<bool> amsgrad{};   // Adam, AdamW
  std::optional<bool> maximize{};
};

// Reads the hyper-parameters of one saved parameter group for load_state_dict, collecting
// problems instead of throwing so that one error can list them all.
class GroupReader {
 public:
  GroupReader(const StateDict& group, std::string key_prefix);
  double number(const std::string& name);                   // a 0-d real number
  bool flag(const std::string& name);                       // a 0-d bool
  // A 0-d bool that older files lack (one PyTorch added later): `fallback` when absent.
  bool flag_or(const std::string& name, bool fallback);
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
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // One update of every parameter that has a gradient (parameters without one are skipped).
  virtual void step() = 0;
  // set_to_none = true (PyTorch 2.x default): .grad becomes undefined, so the next backward
  // writes it fresh; false: the existing gradient tensors are detached and zeroed in place.
  // The same function as Module::zero_grad (nn::zero_grad, nn/parameter.h).
  void zero_grad(bool set_to_none = true);

  // Every group's parameters, group 0's first (the numbering of state_dict's state.<i>).
  const std::vector<Tensor>& parameters() const { return parameters_; }
  // PyTorch's len(optimizer.param_groups), and group g's parameters (IndexError past the end).
  std::size_t param_group_count() const { return group_starts_.size() - 1; }
  std::vector<Tensor> group_parameters(std::size_t group) const;

  // Group 0's lr (the only one of a single-list optimizer); setting it sets every group's,
  // like `for g in optimizer.param_groups: g["lr"] = lr`.
  double learning_rate() const { return group_learning_rate(0); }
  void set_learning_rate(double lr);
  // One group's lr: PyTorch's optimizer.param_groups[g]["lr"] (IndexError past the end).
  virtual double group_learning_rate(std::size_t group) const = 0;
  virtual void set_group_learning_rate(std::size_t group, double lr) = 0;
  // The class name PyTorch prints ("SGD", "Adam", "AdamW"), used in error messages.
  virtual std::string name() const = 0;

  // The momentum a learning-rate schedule may cycle (OneCycleLR, nn/lr_one_cycle.h):
  // PyTorch's param_group["momentum"] (SGD) or param_group["betas"][0] (Adam, AdamW:
  // uses_betas). has_momentum() is false for an optimizer with neither. momentum() is
  // group 0's; set_momentum sets every group's.
  virtual bool has_momentum() const { return false; }
  virtual bool uses_betas() const { return false; }
  double momentum() const { return group_momentum(0); }
  void set_momentum(double momentum);
  virtual double group_momentum(std::size_t group) const;
  virtual void set_group_momentum(std::size_t group, double momentum);

  // PyTorch's param_group["initial_lr"], one per group: the lr before any scheduler changed
  // it. The first learning-rate scheduler built on this optimizer sets them, later ones read
  // them (so a SequentialLR's schedules share one base lr per group, as in PyTorch). Empty
  // until then. Not in state_dict: each scheduler's own state_dict keeps its base_lrs.
  std::vector<double> initial_lrs;

  StateDict state_dict() const;
  void load_state_dict(const StateDict& state);

 protected:
  // The groups' parameters, checked as PyTorch's add_param_group does: "optimizer got an
  // empty parameter list" for no groups at all (a group may be empty, as in PyTorch),
  // undefined and non-leaf tensors refused, and "some parameters appear in more than one
  // parameter group".
  explicit Optimizer(const std::vector<ParamGroup>& groups);
  // A plain parameter list as one group without settings of its own ("optimizer got an
  // empty parameter list" when empty: PyTorch refuses an empty list, not an empty group).
  static std::vector<ParamGroup> one_group(std::vector<Tensor> parameters);
  // `group` itself, or IndexError("list index out of range") past the last group.
  std::size_t checked_group(std::size_t group) const;
  // The group parameter i belongs to.
  std::size_t group_of(std::size_t parameter) const;
  // ValueError when `group` sets a field this optimizer has no use for (`foreign` lists
  // them by name): "<name> has no hyper-parameter '<field>' (parameter group <g>)".
  void refuse_foreign_fields(std::size_t group, const std::vector<std::pair<const char*, bool>>& foreign) const;

  // What one parameter's state holds once it has any: load_state_dict requires all of
  // these names (no more) for every parameter that has state. A scalar slot is 0-d and
  // keeps its dtype and device (PyTorch's `step`); any other has the parameter's shape and
  // is moved to the parameter's device and floating dtype.
  struct StateSlot {
    std::string name;
    bool scalar = false;
  };
  // (Per group: an SGD group without momentum keeps no momentum_buffer.)
  virtual std::vector<StateSlot> state_slots(std::size_t group) const = 0;
  // Group g's hyper-parameters by PyTorch's names, in PyTorch's order.
  virtual StateDict hyperparameters(std::size_t group) const = 0;
  // Reads every hyper-parameter of group g from `reader` and applies them only if
  // reader.ok() after the optimizer's own checks (report those with reader.reject).
  virtual void load_hyperparameters(std::size_t group, GroupReader& reader) = 0;

  // The named state of parameter i (created empty on first use).
  nn::OrderedDict<Tensor>& state_of(std::size_t i) { return state_[i]; }

  std::vector<Tensor> parameters_;
  // Group g holds parameters_[group_starts_[g], group_starts_[g + 1]); one more entry than groups.
  std::vector<std::size_t> group_starts_;
  std::vector<nn::OrderedDict<Tensor>> state_;
};

// Hyper-parameters as state_dict tensors: 0-d float64, 0-d bool, and a float64 pair.
Tensor hyperparameter_tensor(double value);
Tensor hyperparameter_tensor(bool value);
Tensor hyperparameter_tensor(double first, double second);

}  // namespace ember::optim
