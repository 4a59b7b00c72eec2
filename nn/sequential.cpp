// nn/sequential.cpp — nn::Sequential (see sequential.h).
#include <ember/nn/sequential.h>

#include <string>

namespace ember::nn {

Sequential::Sequential(std::initializer_list<std::shared_ptr<Module>> modules) {
  for (const auto& module : modules) push_back(module);
}

Sequential::Sequential(const std::vector<std::shared_ptr<Module>>& modules) {
  for (const auto& module : modules) push_back(module);
}

void Sequential::push_back(std::shared_ptr<Module> module) {
  EMBER_CHECK(module != nullptr, ValueError, "Sequential: cannot add a null module");
  register_module(std::to_string(modules_.size()), module);
  modules_.push_back(std::move(module));
}

std::shared_ptr<Module> Sequential::operator[](std::int64_t index) const {
  const auto count = static_cast<std::int64_t>(modules_.size());
  EMBER_CHECK(index >= -count && index < count, IndexError, "index ", index, " is out of range");
  return modules_[static_cast<std::size_t>(index < 0 ? index + count : index)];
}

Tensor Sequential::forward(const Tensor& input) {
  Tensor output = input;
  for (const auto& module : modules_) output = module->forward(output);
  return output;
}

std::shared_ptr<Sequential> sequential(std::initializer_list<std::shared_ptr<Module>> modules) {
  return std::make_shared<Sequential>(modules);
}

}  // namespace ember::nn
