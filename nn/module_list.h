// nn/module_list.h — nn::ModuleList: an indexable list of modules with no forward of its own.
//
// PyTorch's torch.nn.ModuleList: it registers its modules under "0", "1", ... (so their
// parameters are named h.0.attn.c_attn.weight) and the owner decides how to run them — the
// GPT's blocks (nn/gpt.h) loop `for (auto& block : *h) x = block->forward(x)`. Unlike
// Sequential it has no forward; calling one is PyTorch's error. Printing lists every entry
// (PyTorch folds repeated identical entries into "(0-1): 2 x Block(...)"; ember does not).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <ember/nn/module.h>

namespace ember::nn {

class ModuleList : public Module {
 public:
  ModuleList() = default;
  explicit ModuleList(const std::vector<std::shared_ptr<Module>>& modules);

  // Appends a module under the next index name.
  void push_back(std::shared_ptr<Module> module);
  std::size_t size() const { return modules_.size(); }
  // Negative indices count from the end, as in PyTorch ("index 5 is out of range").
  std::shared_ptr<Module> operator[](std::int64_t index) const;
  auto begin() const { return modules_.begin(); }
  auto end() const { return modules_.end(); }

 private:
  std::vector<std::shared_ptr<Module>> modules_;
};

}  // namespace ember::nn
