// nn/optimizer.cpp — the shared parts of every optimizer (see optimizer.h).
#include <ember/nn/optimizer.h>

#include <ember/autograd/grad_mode.h>
#include <ember/autograd/ops.h>
#include <ember/core/print.h>

namespace ember::optim {

Optimizer::Optimizer(std::vector<Tensor> parameters) : parameters_(std::move(parameters)) {
  EMBER_CHECK(!parameters_.empty(), ValueError, "optimizer got an empty parameter list");
  for (const auto& parameter : parameters_)
    EMBER_CHECK(parameter.defined(), ValueError, "optimizer can only optimize Tensors, but one of the params is undefined");
  state_.resize(parameters_.size());
}

void Optimizer::zero_grad(bool set_to_none) {
  for (auto& parameter : parameters_) {
    if (!parameter.grad().defined()) continue;
    if (set_to_none) {
      parameter.mutable_grad() = Tensor();
    } else {
      NoGradGuard no_grad;
      parameter.mutable_grad().zero_();
    }
  }
}

StateDict Optimizer::state_dict() const {
  StateDict result;
  for (std::size_t i = 0; i < state_.size(); ++i)
    for (const auto& [name, tensor] : state_[i]) result.insert("state." + std::to_string(i) + "." + name, tensor);
  return result;
}

void Optimizer::load_state_dict(const StateDict& state) {
  // Parse and check everything first, so a bad file leaves the optimizer as it was.
  std::vector<nn::OrderedDict<Tensor>> loaded(parameters_.size());
  for (const auto& [key, tensor] : state) {
    const std::string prefix = "state.";
    const std::size_t dot = key.find('.', prefix.size());
    EMBER_CHECK(key.rfind(prefix, 0) == 0 && dot != std::string::npos && dot > prefix.size(), ValueError,
                "optimizer state_dict: unexpected key \"", key, "\" (expected state.<index>.<name>)");
    const std::string index_text = key.substr(prefix.size(), dot - prefix.size());
    EMBER_CHECK(index_text.find_first_not_of("0123456789") == std::string::npos, ValueError,
                "optimizer state_dict: unexpected key \"", key, "\" (expected state.<index>.<name>)");
    const std::size_t index = std::stoul(index_text);
    EMBER_CHECK(index < parameters_.size(), ValueError, "optimizer state_dict: key \"", key,
                "\" refers to parameter ", index, " but the optimizer has ", parameters_.size(), " parameters");
    const std::string name = key.substr(dot + 1);
    // Per-parameter buffers have the parameter's shape; scalars (step) are 0-d.
    const bool fits = tensor.dim() == 0 || IntArrayRef(tensor.sizes()) == IntArrayRef(parameters_[index].sizes());
    EMBER_CHECK(fits, ShapeError, "optimizer state_dict: \"", key, "\" has shape ", size_string(tensor.sizes()),
                " but parameter ", index, " has shape ", size_string(parameters_[index].sizes()));
    loaded[index].insert(name, tensor.dim() == 0 ? tensor.clone() : tensor.to(parameters_[index].dtype()).clone());
  }
  state_ = std::move(loaded);
}

}  // namespace ember::optim
