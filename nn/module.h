// nn/module.h — nn::Module: the base of every layer and every model.
//
// Tutorial §5: "we typically subclass torch.nn.Module to define our own network
// architecture ... it allows us to encapsulate layers and operations and keep track of the
// model's parameters." A Module holds three ordered registries:
//   parameters  - trainable tensors (Linear's weight and bias),
//   buffers     - tensors saved in the state_dict but not trained (running statistics),
//   children    - sub-modules (NeuralNetwork's `layers`, Sequential's 0, 1, 2 ...).
// Everything else — parameters() for the optimizer, dotted names for the state_dict,
// train()/eval(), to(dtype), zero_grad(), the repr — walks these registries recursively.
//
// Writing a model (libtorch style; PyTorch registers on attribute assignment, C++ cannot):
//   struct NeuralNetwork : ember::nn::Module {
//     std::shared_ptr<ember::nn::Sequential> layers;
//     NeuralNetwork(int64_t in, int64_t out) {
//       layers = register_module("layers", ember::nn::sequential({...}));
//     }
//     ember::Tensor forward(const ember::Tensor& x) override { return (*layers)(x); }
//   };
// Modules live in std::shared_ptr (a model and its children are shared, never copied).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <ember/core/device.h>
#include <ember/core/dtype.h>
#include <ember/core/tensor.h>
#include <ember/nn/ordered_dict.h>
#include <ember/nn/parameter.h>

namespace ember::nn {

// What state_dict() returns and load_state_dict() takes: dotted name -> tensor, in
// registration order ("layers.0.weight", "layers.0.bias", ...).
using StateDict = OrderedDict<Tensor>;

// What load_state_dict(strict = false) reports, like PyTorch's _IncompatibleKeys.
// Printing an empty one gives "<All keys matched successfully>" (tutorial §8).
struct IncompatibleKeys {
  std::vector<std::string> missing_keys;
  std::vector<std::string> unexpected_keys;
};
std::ostream& operator<<(std::ostream& out, const IncompatibleKeys& keys);

class Module : public std::enable_shared_from_this<Module> {
 public:
  Module() = default;
  virtual ~Module() = default;
  Module(const Module&) = delete;             // a module owns parameters: share, never copy
  Module& operator=(const Module&) = delete;

  // ------------------------------------------------------------ forward
  // Subclasses override forward; calling the module runs it (model(x) in PyTorch).
  virtual Tensor forward(const Tensor& input);
  Tensor operator()(const Tensor& input) { return forward(input); }

  // ------------------------------------------------------------ registration
  // Registers `tensor` as a parameter named `name` and returns the Parameter (same handle,
  // requires_grad switched on unless `requires_grad` is false). An undefined tensor
  // registers "no parameter" (Linear(bias=false) registers bias = None in PyTorch).
  // Registering an existing name replaces the parameter in place, keeping its position (PyTorch's
  // `module.weight = other.weight`, how weights are tied).
  Parameter register_parameter(const std::string& name, const Tensor& tensor, bool requires_grad = true);
  // Buffers are saved in the state_dict (unless persistent is false) but never trained.
  Tensor register_buffer(const std::string& name, const Tensor& tensor, bool persistent = true);
  template <class ModuleType>
  std::shared_ptr<ModuleType> register_module(const std::string& name, std::shared_ptr<ModuleType> module) {
    register_module_impl(name, module);
    return module;
  }

  // ------------------------------------------------------------ traversal
  // A parameter registered under two names (a tied weight: the GPT's wte.weight is its
  // lm_head.weight) is listed once, under its first name, as PyTorch's
  // named_parameters(remove_duplicate=True) does, so an optimizer updates it once.
  // state_dict() keeps every name (PyTorch's too).
  std::vector<Tensor> parameters(bool recurse = true) const;
  std::vector<std::pair<std::string, Tensor>> named_parameters(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  std::vector<std::pair<std::string, Tensor>> named_buffers(bool recurse = true) const;
  std::vector<std::shared_ptr<Module>> children() const;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_children() const;
  // This module first, then every descendant (depth first), as PyTorch's modules().
  std::vector<std::shared_ptr<Module>> modules();
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_modules(const std::string& prefix = "");
  // Calls fn on every child's subtree first, then on this module (post-order), as PyTorch's
  // Module.apply: the order in which an init function such as the GPT's draws its weights.
  Module& apply(const std::function<void(Module&)>& fn);

  // ------------------------------------------------------------ modes and conversions
  // train() / eval() set the flag on this module and every descendant (Dropout reads it).
  Module& train(bool on = true);
  Module& eval() { return train(false); }
  bool is_training() const { return training_; }
  // Converts every parameter and buffer in place: the Parameter handles a user holds
  // (model.layers[0].weight) see the new data, as param.data = ... does in PyTorch.
  // Integer buffers keep their dtype under to(dtype), as in PyTorch.
  Module& to(Device device);
  Module& to(DType dtype);
  // set_to_none = true (PyTorch 2.x default): grads become undefined; false: detached and
  // zeroed. One implementation with Optimizer::zero_grad: nn::zero_grad (nn/parameter.h).
  void zero_grad(bool set_to_none = true);

  // ------------------------------------------------------------ state_dict
  StateDict state_dict() const;
  // Copies matching tensors into the parameters/buffers (under no_grad). strict = true
  // throws on missing or unexpected keys, listing them as PyTorch does; a shape mismatch
  // is an error either way.
  IncompatibleKeys load_state_dict(const StateDict& state, bool strict = true);

  // ------------------------------------------------------------ printing
  // The class name PyTorch prints: the C++ type's name without namespaces
  // ("NeuralNetwork", "Linear"). Override to print something else.
  virtual std::string name() const;
  // The text inside the parentheses of a leaf module: "in_features=50, out_features=30, bias=True".
  virtual std::string extra_repr() const { return ""; }
  // The full multi-line repr (PyTorch's Module.__repr__).
  std::string repr() const;

  // Direct access to this module's own registries (not recursive).
  const OrderedDict<Parameter>& local_parameters() const { return parameters_; }
  const OrderedDict<std::shared_ptr<Module>>& local_children() const { return children_; }

 protected:
  void register_module_impl(const std::string& name, std::shared_ptr<Module> module);

 private:
  void collect_named_parameters(const std::string& prefix, std::vector<std::pair<std::string, Tensor>>& out) const;
  void collect_named_buffers(const std::string& prefix, bool persistent_only,
                             std::vector<std::pair<std::string, Tensor>>& out) const;
  void check_new_name(const std::string& name, const char* kind) const;

  OrderedDict<Parameter> parameters_;
  OrderedDict<Tensor> buffers_;
  std::vector<std::string> non_persistent_buffers_;
  OrderedDict<std::shared_ptr<Module>> children_;
  bool training_ = true;
};

// print(model)
std::ostream& operator<<(std::ostream& out, const Module& module);
// std::cout << model, for a std::shared_ptr to any module type (more specialised than the
// standard library's operator<< for shared_ptr, which prints the address).
template <class ModuleType, std::enable_if_t<std::is_base_of_v<Module, ModuleType>, int> = 0>
std::ostream& operator<<(std::ostream& out, const std::shared_ptr<ModuleType>& module) {
  return out << static_cast<const Module&>(*module);
}
// The number of elements over all parameters (requires_grad ones only when trainable_only):
// tutorial §5's "Total number of trainable model parameters: 2213".
std::int64_t count_parameters(const Module& module, bool trainable_only = true);

}  // namespace ember::nn
