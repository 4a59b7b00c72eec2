// nn/optimizer.cpp — the shared parts of every optimizer (see optimizer.h): zero_grad (nn::zero_grad) and
// the state_dict in PyTorch's layout, with a load_state_dict that checks all of it first.
#include <ember/nn/optimizer.h>

#include <algorithm>
#include <optional>
#include <unordered_set>

#include <ember/autograd/grad_mode.h>
#include <ember/autograd/ops.h>
#include <ember/core/factories.h>
#include <ember/core/print.h>
#include <ember/core/profiler.h>

namespace ember::optim {

namespace {

constexpr const char* kStatePrefix = "state.";
constexpr const char* kGroupPrefix = "param_groups.";

// "123" -> 123; nullopt for an empty string, a non-digit or a number past `limit` (the
// text comes from a file: no std::stoul, which throws std::out_of_range).
std::optional<std::size_t> parse_index(const std::string& text, std::size_t limit) {
  if (text.empty() || text.size() > 18) return std::nullopt;
  std::size_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<std::size_t>(c - '0');
  }
  if (value >= limit) return std::nullopt;
  return value;
}

// "state.<index>.<name>" -> (index, name) when index < count and name is not empty.
std::optional<std::pair<std::size_t, std::string>> split_indexed_key(const std::string& key, const std::string& prefix,
                                                                     std::size_t count) {
  if (key.rfind(prefix, 0) != 0) return std::nullopt;
  const std::size_t dot = key.find('.', prefix.size());
  if (dot == std::string::npos || dot + 1 == key.size()) return std::nullopt;
  const auto index = parse_index(key.substr(prefix.size(), dot - prefix.size()), count);
  if (!index) return std::nullopt;
  return std::make_pair(*index, key.substr(dot + 1));
}

std::string join_quoted(const std::vector<std::string>& keys) {
  std::string result;
  for (std::size_t i = 0; i < keys.size(); ++i) result += (i ? ", \"" : "\"") + keys[i] + "\"";
  return result;
}

bool is_real_number(const Tensor& t) { return t.dtype() != kBool; }

}  // namespace

// ------------------------------------------------------------------ GroupReader

GroupReader::GroupReader(const StateDict& group, std::string key_prefix) : group_(group), prefix_(std::move(key_prefix)) {}

const Tensor* GroupReader::find(const std::string& name) {
  read_.push_back(name);
  const Tensor* value = group_.find(name);
  if (value == nullptr) missing_.push_back(prefix_ + name);
  else if (!value->defined()) {
    problems_.push_back(prefix_ + name + " is an undefined tensor");
    return nullptr;
  }
  return value;
}

double GroupReader::number(const std::string& name) {
  const Tensor* value = find(name);
  if (value == nullptr) return 0.0;
  if (value->dim() != 0 || !is_real_number(*value)) {
    problems_.push_back(prefix_ + name + " must be a 0-d number, got a " + dtype_name(value->dtype()) + " tensor of shape " +
                        size_string(value->sizes()));
    return 0.0;
  }
  return value->item<double>();
}

bool GroupReader::flag(const std::string& name) {
  const Tensor* value = find(name);
  if (value == nullptr) return false;
  if (value->dim() != 0 || value->dtype() != kBool) {
    problems_.push_back(prefix_ + name + " must be a 0-d bool, got a " + dtype_name(value->dtype()) + " tensor of shape " +
                        size_string(value->sizes()));
    return false;
  }
  return value->item<bool>();
}

bool GroupReader::flag_or(const std::string& name, bool fallback) {
  if (group_.find(name) == nullptr) {
    read_.push_back(name);
    return fallback;
  }
  return flag(name);
}

std::pair<double, double> GroupReader::pair(const std::string& name) {
  const Tensor* value = find(name);
  if (value == nullptr) return {0.0, 0.0};
  if (value->dim() != 1 || value->size(0) != 2 || !is_real_number(*value)) {
    problems_.push_back(prefix_ + name + " must be a pair of numbers (shape [2]), got a " + dtype_name(value->dtype()) +
                        " tensor of shape " + size_string(value->sizes()));
    return {0.0, 0.0};
  }
  const Tensor values = value->to(kCPU).to(kFloat64).contiguous();
  return {values[0].item<double>(), values[1].item<double>()};
}

std::vector<std::string> GroupReader::unread_keys() const {
  std::vector<std::string> unread;
  for (const auto& [name, tensor] : group_)
    if (std::find(read_.begin(), read_.end(), name) == read_.end()) unread.push_back(prefix_ + name);
  return unread;
}

Tensor hyperparameter_tensor(double value) { return ember::full({}, value, kFloat64); }
Tensor hyperparameter_tensor(bool value) { return ember::full({}, value, kBool); }
Tensor hyperparameter_tensor(double first, double second) { return ember::tensor({first, second}, kFloat64); }

// ------------------------------------------------------------------ Optimizer

Optimizer::Optimizer(const std::vector<ParamGroup>& groups) {
  // An empty group is allowed, as in PyTorch (one_group refuses an empty plain list).
  EMBER_CHECK(!groups.empty(), ValueError, "optimizer got an empty parameter list");
  std::unordered_set<const void*> seen;  // identity, as PyTorch's set of parameters
  group_starts_.push_back(0);
  for (const ParamGroup& group : groups) {
    bool shared = false;
    for (const auto& parameter : group.params) {
      EMBER_CHECK(parameter.defined(), ValueError, "optimizer can only optimize Tensors, but one of the params is undefined");
      // PyTorch's add_param_group: a non-leaf's .grad is never filled by backward (unless it
      // retains it), and the step would write into the output of an op, not a weight.
      EMBER_CHECK(parameter.is_leaf() || parameter.retains_grad(), ValueError, "can't optimize a non-leaf Tensor");
      if (seen.count(parameter.impl_ptr().get()) != 0) shared = true;
    }
    EMBER_CHECK(!shared, ValueError, "some parameters appear in more than one parameter group");
    // Added after the check: a parameter listed twice in one group is not "another group"
    // (PyTorch only warns about that).
    for (const auto& parameter : group.params) seen.insert(parameter.impl_ptr().get());
    parameters_.insert(parameters_.end(), group.params.begin(), group.params.end());
    group_starts_.push_back(parameters_.size());
  }
  state_.resize(parameters_.size());
}

std::vector<ParamGroup> Optimizer::one_group(std::vector<Tensor> parameters) {
  EMBER_CHECK(!parameters.empty(), ValueError, "optimizer got an empty parameter list");
  std::vector<ParamGroup> groups(1);
  groups[0].params = std::move(parameters);
  return groups;
}

std::size_t Optimizer::checked_group(std::size_t group) const {
  EMBER_CHECK(group < param_group_count(), IndexError, "list index out of range (parameter group ", group, " of ",
              param_group_count(), ")");
  return group;
}

std::size_t Optimizer::group_of(std::size_t parameter) const {
  const auto after = std::upper_bound(group_starts_.begin(), group_starts_.end(), parameter);
  return static_cast<std::size_t>(after - group_starts_.begin()) - 1;
}

std::vector<Tensor> Optimizer::group_parameters(std::size_t group) const {
  checked_group(group);
  return {parameters_.begin() + static_cast<std::ptrdiff_t>(group_starts_[group]),
          parameters_.begin() + static_cast<std::ptrdiff_t>(group_starts_[group + 1])};
}

void Optimizer::refuse_foreign_fields(std::size_t group, const std::vector<std::pair<const char*, bool>>& foreign) const {
  for (const auto& [field, is_set] : foreign)
    EMBER_CHECK(!is_set, ValueError, name(), " has no hyper-parameter '", field, "' (parameter group ", group, ")");
}

void Optimizer::set_learning_rate(double lr) {
  for (std::size_t g = 0; g < param_group_count(); ++g) set_group_learning_rate(g, lr);
}

void Optimizer::set_momentum(double momentum) {
  for (std::size_t g = 0; g < param_group_count(); ++g) set_group_momentum(g, momentum);
}

double Optimizer::group_momentum(std::size_t group) const {
  checked_group(group);
  return 0.0;
}

void Optimizer::set_group_momentum(std::size_t group, double) { checked_group(group); }

void Optimizer::zero_grad(bool set_to_none) {
  const profiler::RecordScope scope(profiler::EventKind::Annotation, "Optimizer.zero_grad");
  nn::zero_grad(parameters_, set_to_none);
}

StateDict Optimizer::state_dict() const {
  StateDict result;
  for (std::size_t i = 0; i < state_.size(); ++i)
    for (const auto& [name, tensor] : state_[i]) result.insert(kStatePrefix + std::to_string(i) + "." + name, tensor);
  for (std::size_t g = 0; g < param_group_count(); ++g) {
    const std::string group = kGroupPrefix + std::to_string(g) + ".";
    for (const auto& [name, value] : hyperparameters(g)) result.insert(group + name, value);
    // PyTorch numbers the parameters on across groups: [0, 1], [2, 3, 4], ...
    result.insert(group + "params", ember::arange(static_cast<std::int64_t>(group_starts_[g]),
                                                  static_cast<std::int64_t>(group_starts_[g + 1]), 1, kInt64));
  }
  return result;
}

void Optimizer::load_state_dict(const StateDict& state) {
  const std::size_t count = parameters_.size();
  const std::size_t group_count = param_group_count();
  std::vector<std::string> missing, unexpected, problems;

  // 1. Sort the keys into per-parameter state and the parameter groups.
  std::vector<nn::OrderedDict<Tensor>> loaded(count);
  std::vector<StateDict> groups(group_count);
  bool other_groups = false;
  for (const auto& [key, tensor] : state) {
    if (auto parsed = split_indexed_key(key, kStatePrefix, count)) {
      loaded[parsed->first].insert(parsed->second, tensor);
    } else if (auto grouped = split_indexed_key(key, kGroupPrefix, group_count)) {
      groups[grouped->first].insert(grouped->second, tensor);
    } else if (split_indexed_key(key, kGroupPrefix, SIZE_MAX)) {
      other_groups = true;
    } else {
      unexpected.push_back(key);
    }
  }
  // A checkpoint without param_groups keeps the constructor's hyper-parameters; one with
  // them must have every group (PyTorch: len(groups) != len(saved_groups)).
  const bool has_groups = std::any_of(groups.begin(), groups.end(), [](const StateDict& g) { return !g.empty(); });
  const bool every_group = std::all_of(groups.begin(), groups.end(), [](const StateDict& g) { return !g.empty(); });
  if (other_groups || (has_groups && !every_group))
    problems.push_back("loaded state dict has a different number of parameter groups");

  // 2. Each group's hyper-parameters replace the constructor's (checked, then applied).
  //    `previous` undoes them on failure.
  std::vector<StateDict> previous;
  for (std::size_t g = 0; g < group_count; ++g) previous.push_back(hyperparameters(g));
  auto group_prefix = [](std::size_t g) { return kGroupPrefix + std::to_string(g) + "."; };
  for (std::size_t g = 0; g < group_count && has_groups; ++g) {
    const StateDict& group = groups[g];
    if (group.empty()) continue;  // reported above as a different number of groups
    const std::size_t begin = group_starts_[g], size = group_starts_[g + 1] - begin;
    if (const Tensor* params = group.find("params")) {
      const bool fits = params->defined() && params->dim() == 1 && params->dtype() == kInt64 &&
                        params->size(0) == static_cast<std::int64_t>(size);
      const Tensor expected = ember::arange(static_cast<std::int64_t>(begin), static_cast<std::int64_t>(begin + size), 1, kInt64);
      if (!fits) {
        problems.push_back("loaded state dict contains a parameter group that doesn't match the size of optimizer's group (" +
                           group_prefix(g) + "params must list " + std::to_string(size) + " parameter indices)");
      } else if (size > 0 && !params->to(kCPU).equal(expected)) {
        problems.push_back(group_prefix(g) + "params must be the indices " + std::to_string(begin) + ".." +
                           std::to_string(begin + size - 1) + " in order");
      }
    } else {
      missing.push_back(group_prefix(g) + "params");
    }
    StateDict values;
    for (const auto& [name, tensor] : group)
      if (name != "params") values.insert(name, tensor);
    GroupReader reader(values, group_prefix(g));
    load_hyperparameters(g, reader);
    missing.insert(missing.end(), reader.missing_keys().begin(), reader.missing_keys().end());
    const auto unread = reader.unread_keys();
    unexpected.insert(unexpected.end(), unread.begin(), unread.end());
    problems.insert(problems.end(), reader.problems().begin(), reader.problems().end());
  }

  // 3. Each parameter's state: empty (never stepped) or exactly the optimizer's slots
  //    (with the hyper-parameters just read: amsgrad adds max_exp_avg_sq).
  for (std::size_t i = 0; i < count; ++i) {
    if (loaded[i].empty()) continue;
    const std::vector<StateSlot> slots = state_slots(group_of(i));
    const std::string prefix = kStatePrefix + std::to_string(i) + ".";
    const Tensor& parameter = parameters_[i];
    for (const auto& [name, tensor] : loaded[i]) {
      // An init-capture, not [&]: clang 14 (the fuzz build) cannot capture a structured binding.
      const auto slot = std::find_if(slots.begin(), slots.end(),
                                     [&slot_name = name](const StateSlot& s) { return s.name == slot_name; });
      if (slot == slots.end()) {
        unexpected.push_back(prefix + name);
      } else if (!tensor.defined()) {
        problems.push_back(prefix + name + " is an undefined tensor");
      } else if (slot->scalar) {
        if (tensor.dim() != 0 || !is_real_number(tensor))
          problems.push_back("size mismatch for " + prefix + name + ": copying a " + dtype_name(tensor.dtype()) +
                             " tensor with shape " + size_string(tensor.sizes()) +
                             " from checkpoint, the optimizer keeps a 0-d number.");
      } else if (!(IntArrayRef(tensor.sizes()) == IntArrayRef(parameter.sizes()))) {
        problems.push_back("size mismatch for " + prefix + name + ": copying a tensor with shape " +
                           size_string(tensor.sizes()) + " from checkpoint, the shape of parameter " + std::to_string(i) +
                           " is " + size_string(parameter.sizes()) + ".");
      } else if (parameter.is_floating_point() && !tensor.is_floating_point()) {
        problems.push_back(prefix + name + " has dtype " + dtype_name(tensor.dtype()) + " but parameter " +
                           std::to_string(i) + " is " + dtype_name(parameter.dtype()) +
                           ": optimizer state of a floating parameter is floating point.");
      }
    }
    for (const auto& slot : slots)
      if (!loaded[i].contains(slot.name)) missing.push_back(prefix + slot.name);
  }

  // PyTorch's layout of the message (as Module::load_state_dict): missing, unexpected, the rest.
  std::vector<std::string> errors;
  if (!missing.empty()) errors.push_back("Missing key(s) in state_dict: " + join_quoted(missing) + ". ");
  if (!unexpected.empty()) errors.push_back("Unexpected key(s) in state_dict: " + join_quoted(unexpected) + ". ");
  errors.insert(errors.end(), problems.begin(), problems.end());
  if (!errors.empty()) {
    for (std::size_t g = 0; g < group_count; ++g) {
      GroupReader undo(previous[g], group_prefix(g));
      load_hyperparameters(g, undo);  // the values it had: always valid
    }
    std::string message = "Error(s) in loading state_dict for " + name() + ":";
    for (const auto& error : errors) message += "\n\t" + error;
    throw ValueError(message);
  }

  // 4. Apply. Like PyTorch's Optimizer.load_state_dict: state follows its parameter's
  //    device and, for a floating parameter, its dtype — except scalar slots (`step`),
  //    which PyTorch leaves as saved. Cloned, so the caller's tensors are never aliased.
  NoGradGuard no_grad;
  for (std::size_t i = 0; i < count; ++i) {
    nn::OrderedDict<Tensor> converted;
    const Tensor& parameter = parameters_[i];
    for (const auto& slot : state_slots(group_of(i))) {
      const Tensor* tensor = loaded[i].find(slot.name);
      if (tensor == nullptr) continue;
      Tensor value = tensor->detach();
      if (!slot.scalar) {
        if (parameter.is_floating_point()) value = value.to(parameter.dtype());
        value = value.to(parameter.device());
      }
      converted.insert(slot.name, value.clone());
    }
    loaded[i] = std::move(converted);
  }
  state_ = std::move(loaded);
}

}  // namespace ember::optim
