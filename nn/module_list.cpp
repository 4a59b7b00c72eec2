// nn/module_list.cpp — nn::ModuleList (see module_list.h).
#include <ember/nn/module_list.h>

#include <string>

namespace ember::nn {

ModuleList::ModuleList(const std::vector<std::shared_ptr<Module>>& modules) {
  for (const auto& module : modules) push_back(module);
}

void ModuleList::push_back(std::shared_ptr<Module> module) {
  EMBER_CHECK(module != nullptr, ValueError, "ModuleList: cannot add a null module");
  register_module(std::to_string(modules_.size()), module);
  modules_.push_back(std::move(module));
}

std::shared_ptr<Module> ModuleList::operator[](std::int64_t index) const {
  const auto count = static_cast<std::int64_t>(modules_.size());
  EMBER_CHECK(index >= -count && index < count, IndexError, "index ", index, " is out of range");
  return modules_[static_cast<std::size_t>(index < 0 ? index + count : index)];
}

}  // namespace ember::nn
