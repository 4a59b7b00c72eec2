// nn/module.cpp — registries, recursive traversal, state_dict and the repr of nn::Module.
#include <ember/nn/module.h>

#include <cxxabi.h>

#include <cstdlib>
#include <functional>
#include <sstream>
#include <typeinfo>

#include <ember/autograd/grad_mode.h>
#include <ember/autograd/ops.h>
#include <ember/core/print.h>
#include <ember/nn/python_format.h>

namespace ember::nn {

namespace {

// PyTorch's _addindent: every line but the first is shifted right by `spaces`.
std::string add_indent(const std::string& text, int spaces) {
  std::string result;
  for (char c : text) {
    result += c;
    if (c == '\n') result.append(static_cast<std::size_t>(spaces), ' ');
  }
  return result;
}

std::string join_quoted(const std::vector<std::string>& keys) {
  std::string result;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (i) result += ", ";
    result += "\"" + keys[i] + "\"";
  }
  return result;
}

// Points every handle of `target` at `replacement`'s data (PyTorch: param.data = new).
// The TensorImpl is shared by all handles, so rewriting its fields updates them all, and
// the autograd meta (requires_grad, grad) stays where it is. A change of dtype or device also
// forgets the leaf's gradient accumulator, as PyTorch's set_data does: a graph still alive from
// before the conversion keeps the old one, which would cast new gradients to the old dtype.
void replace_data(const Tensor& target, const Tensor& replacement) {
  if (replacement.is_same(target)) return;
  TensorImpl& impl = target.impl();
  const TensorImpl& source = replacement.impl();
  if (impl.autograd_meta && (impl.dtype != source.dtype || target.device() != replacement.device()))
    impl.autograd_meta->grad_accumulator.reset();
  impl.storage = source.storage;
  impl.sizes = source.sizes;
  impl.strides = source.strides;
  impl.storage_offset = source.storage_offset;
  impl.dtype = source.dtype;
}

}  // namespace

std::ostream& operator<<(std::ostream& out, const IncompatibleKeys& keys) {
  if (keys.missing_keys.empty() && keys.unexpected_keys.empty()) return out << "<All keys matched successfully>";
  return out << "_IncompatibleKeys(missing_keys=" << python_string_list(keys.missing_keys)
             << ", unexpected_keys=" << python_string_list(keys.unexpected_keys) << ")";
}

Tensor Module::forward(const Tensor&) {
  throw NotImplementedError(make_message("Module [", name(), "] is missing the required \"forward\" function"));
}

void Module::check_new_name(const std::string& name, const char* kind) const {
  EMBER_CHECK(!name.empty(), ValueError, kind, " name can't be empty string \"\"");
  EMBER_CHECK(name.find('.') == std::string::npos, ValueError, kind, " name can't contain \".\"");
  // A name may be re-registered as the same kind (replacing it), never as another kind.
  const bool taken_elsewhere = (std::string(kind) != "parameter" && parameters_.contains(name)) ||
                               (std::string(kind) != "buffer" && buffers_.contains(name)) ||
                               (std::string(kind) != "module" && children_.contains(name));
  EMBER_CHECK(!taken_elsewhere, ValueError, "attribute '", name, "' already exists");
}

Parameter Module::register_parameter(const std::string& name, const Tensor& tensor, bool requires_grad) {
  check_new_name(name, "parameter");
  Parameter parameter(tensor, requires_grad);
  parameters_.insert(name, parameter);
  return parameter;
}

Tensor Module::register_buffer(const std::string& name, const Tensor& tensor, bool persistent) {
  check_new_name(name, "buffer");
  buffers_.insert(name, tensor);
  if (!persistent) non_persistent_buffers_.push_back(name);
  return tensor;
}

void Module::register_module_impl(const std::string& name, std::shared_ptr<Module> module) {
  check_new_name(name, "module");
  children_.insert(name, std::move(module));
}

// ------------------------------------------------------------------ traversal

void Module::collect_named_parameters(const std::string& prefix,
                                      std::vector<std::pair<std::string, Tensor>>& out) const {
  for (const auto& [name, parameter] : parameters_)
    if (parameter.defined()) out.emplace_back(prefix + name, parameter);
  for (const auto& [name, child] : children_)
    if (child) child->collect_named_parameters(prefix + name + ".", out);
}

void Module::collect_named_buffers(const std::string& prefix, bool persistent_only,
                                   std::vector<std::pair<std::string, Tensor>>& out) const {
  for (const auto& [name, buffer] : buffers_) {
    if (!buffer.defined()) continue;
    bool persistent = true;
    for (const auto& excluded : non_persistent_buffers_) persistent = persistent && excluded != name;
    if (!persistent_only || persistent) out.emplace_back(prefix + name, buffer);
  }
  for (const auto& [name, child] : children_)
    if (child) child->collect_named_buffers(prefix + name + ".", persistent_only, out);
}

std::vector<std::pair<std::string, Tensor>> Module::named_parameters(bool recurse) const {
  std::vector<std::pair<std::string, Tensor>> all;
  if (recurse) {
    collect_named_parameters("", all);
  } else {
    for (const auto& [name, parameter] : parameters_)
      if (parameter.defined()) all.emplace_back(name, parameter);
  }
  // A tied parameter once, under its first name (models have a handful of parameters: the
  // quadratic scan is cheaper than a hash set's allocations).
  std::vector<std::pair<std::string, Tensor>> result;
  for (auto& item : all) {
    bool seen = false;
    for (const auto& kept : result) seen = seen || kept.second.is_same(item.second);
    if (!seen) result.push_back(std::move(item));
  }
  return result;
}

std::vector<Tensor> Module::parameters(bool recurse) const {
  std::vector<Tensor> result;
  for (auto& item : named_parameters(recurse)) result.push_back(item.second);
  return result;
}

std::vector<std::pair<std::string, Tensor>> Module::named_buffers(bool recurse) const {
  std::vector<std::pair<std::string, Tensor>> result;
  if (recurse) {
    collect_named_buffers("", false, result);
  } else {
    for (const auto& [name, buffer] : buffers_)
      if (buffer.defined()) result.emplace_back(name, buffer);
  }
  return result;
}

std::vector<Tensor> Module::buffers(bool recurse) const {
  std::vector<Tensor> result;
  for (auto& item : named_buffers(recurse)) result.push_back(item.second);
  return result;
}

std::vector<std::pair<std::string, std::shared_ptr<Module>>> Module::named_children() const {
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> result;
  for (const auto& item : children_)
    if (item.second) result.push_back(item);
  return result;
}

std::vector<std::shared_ptr<Module>> Module::children() const {
  std::vector<std::shared_ptr<Module>> result;
  for (auto& item : named_children()) result.push_back(item.second);
  return result;
}

std::vector<std::pair<std::string, std::shared_ptr<Module>>> Module::named_modules(const std::string& prefix) {
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> result;
  // shared_from_this needs the module to live in a shared_ptr; a module on the stack
  // still lists its children, with a non-owning handle for itself.
  std::shared_ptr<Module> self = weak_from_this().lock();
  if (!self) self = std::shared_ptr<Module>(this, [](Module*) {});
  result.emplace_back(prefix, self);
  for (auto& [name, child] : named_children()) {
    for (auto& item : child->named_modules(prefix.empty() ? name : prefix + "." + name)) result.push_back(item);
  }
  return result;
}

std::vector<std::shared_ptr<Module>> Module::modules() {
  std::vector<std::shared_ptr<Module>> result;
  for (auto& item : named_modules()) result.push_back(item.second);
  return result;
}

Module& Module::apply(const std::function<void(Module&)>& fn) {
  for (auto& child : children()) child->apply(fn);
  fn(*this);
  return *this;
}

// ------------------------------------------------------------------ modes and conversions

Module& Module::train(bool on) {
  training_ = on;
  for (auto& child : children()) child->train(on);
  return *this;
}

// Converts every tensor first and only then points the handles at the results, so a
// conversion that throws (to("cuda") without a GPU, out of memory) leaves the module as it
// was instead of half moved. Gradients follow their parameters (PyTorch's _apply).
namespace {
void apply_conversion(const std::vector<Tensor>& parameters, const std::vector<Tensor>& buffers,
                      const std::function<bool(const Tensor&)>& applies,
                      const std::function<Tensor(const Tensor&)>& convert) {
  std::vector<std::pair<Tensor, Tensor>> replacements;  // (handle, converted data)
  for (const auto& parameter : parameters) {
    if (!applies(parameter)) continue;
    replacements.emplace_back(parameter, convert(parameter));
    if (parameter.grad().defined()) replacements.emplace_back(parameter.grad(), convert(parameter.grad()));
  }
  for (const auto& buffer : buffers)
    if (applies(buffer)) replacements.emplace_back(buffer, convert(buffer));
  for (const auto& [handle, data] : replacements) replace_data(handle, data);
}
}  // namespace

Module& Module::to(Device device) {
  NoGradGuard no_grad;
  apply_conversion(
      parameters(), buffers(), [](const Tensor&) { return true; }, [&](const Tensor& t) { return t.to(device); });
  return *this;
}

Module& Module::to(DType dtype) {
  EMBER_CHECK(is_floating_point(dtype), DTypeError,
              "nn.Module.to only accepts floating point or complex dtypes, but got desired dtype=torch.",
              dtype_name(dtype));
  NoGradGuard no_grad;
  // PyTorch converts only floating tensors: an int64 step counter stays int64.
  apply_conversion(
      parameters(), buffers(), [](const Tensor& t) { return t.is_floating_point(); },
      [&](const Tensor& t) { return t.to(dtype); });
  return *this;
}

void Module::zero_grad(bool set_to_none) { nn::zero_grad(parameters(), set_to_none); }

// ------------------------------------------------------------------ state_dict

StateDict Module::state_dict() const {
  // PyTorch's order: per module, its parameters then its buffers, then each child's.
  StateDict result;
  for (const auto& [name, parameter] : parameters_)
    if (parameter.defined()) result.insert(name, parameter.detach());
  for (const auto& [name, buffer] : buffers_) {
    bool persistent = true;
    for (const auto& excluded : non_persistent_buffers_) persistent = persistent && excluded != name;
    if (buffer.defined() && persistent) result.insert(name, buffer.detach());
  }
  for (const auto& [child_name, child] : children_) {
    if (!child) continue;
    for (const auto& [name, tensor] : child->state_dict()) result.insert(child_name + "." + name, tensor);
  }
  return result;
}

IncompatibleKeys Module::load_state_dict(const StateDict& state, bool strict) {
  std::vector<std::pair<std::string, Tensor>> expected;
  collect_named_parameters("", expected);
  collect_named_buffers("", true, expected);

  IncompatibleKeys keys;
  std::vector<std::string> size_errors;
  std::vector<std::pair<Tensor, Tensor>> copies;  // (destination, source)
  for (const auto& [name, destination] : expected) {
    const Tensor* source = state.find(name);
    if (!source) {
      keys.missing_keys.push_back(name);
      continue;
    }
    if (!(IntArrayRef(source->sizes()) == IntArrayRef(destination.sizes()))) {
      size_errors.push_back(make_message("size mismatch for ", name, ": copying a param with shape ",
                                         size_string(source->sizes()),
                                         " from checkpoint, the shape in current model is ",
                                         size_string(destination.sizes()), "."));
      continue;
    }
    copies.emplace_back(destination, *source);
  }
  for (const auto& [name, tensor] : state) {
    bool known = false;
    for (const auto& item : expected) known = known || item.first == name;
    if (!known) keys.unexpected_keys.push_back(name);
  }

  // PyTorch's message: missing first, then unexpected, then the size mismatches.
  std::vector<std::string> errors;
  if (strict && !keys.missing_keys.empty())
    errors.push_back("Missing key(s) in state_dict: " + join_quoted(keys.missing_keys) + ". ");
  if (strict && !keys.unexpected_keys.empty())
    errors.push_back("Unexpected key(s) in state_dict: " + join_quoted(keys.unexpected_keys) + ". ");
  errors.insert(errors.end(), size_errors.begin(), size_errors.end());
  if (!errors.empty()) {
    std::string message = "Error(s) in loading state_dict for " + name() + ":";
    for (const auto& error : errors) message += "\n\t" + error;
    throw ValueError(message);
  }

  // Nothing is copied unless everything fits: a failed load leaves the model untouched.
  NoGradGuard no_grad;
  for (auto& [destination, source] : copies) {
    Tensor target = destination;
    target.copy_(source);
  }
  return keys;
}

// ------------------------------------------------------------------ printing

std::string Module::name() const {
  const char* mangled = typeid(*this).name();
  int status = 0;
  char* demangled = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string full = (status == 0 && demangled) ? demangled : mangled;
  std::free(demangled);
  // "ember::nn::Linear" -> "Linear" (the last component outside any template arguments).
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < full.size(); ++i) {
    if (full[i] == '<') ++depth;
    if (full[i] == '>') --depth;
    if (depth == 0 && full[i] == ':' && i + 1 < full.size() && full[i + 1] == ':') start = i + 2;
  }
  return full.substr(start);
}

std::string Module::repr() const {
  // PyTorch's Module.__repr__: extra_repr lines, then "(name): child" lines indented by 2.
  std::vector<std::string> lines;
  std::istringstream extra(extra_repr());
  for (std::string line; std::getline(extra, line);) lines.push_back(line);
  const std::size_t extra_count = lines.size();
  for (const auto& [child_name, child] : children_)
    if (child) lines.push_back("(" + child_name + "): " + add_indent(child->repr(), 2));

  std::string result = name() + "(";
  if (!lines.empty()) {
    if (extra_count == 1 && lines.size() == 1) {
      result += lines[0];
    } else {
      result += "\n";
      for (const auto& line : lines) result += "  " + line + "\n";
    }
  }
  return result + ")";
}

std::ostream& operator<<(std::ostream& out, const Module& module) { return out << module.repr(); }

std::int64_t count_parameters(const Module& module, bool trainable_only) {
  std::int64_t total = 0;
  for (const auto& parameter : module.parameters())
    if (!trainable_only || parameter.requires_grad()) total += parameter.numel();
  return total;
}

}  // namespace ember::nn
