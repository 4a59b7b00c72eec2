// nn/sequential.h — nn::Sequential: runs its modules one after another.
//
// Tutorial §5: "Using Sequential is not required, but it can make our life easier if we
// have a series of layers that we want to execute in a specific order." The children are
// registered under the names "0", "1", ... so parameters are named layers.0.weight, and the
// container is indexable like model.layers[0]:
//   auto layers = nn::sequential({std::make_shared<nn::Linear>(50, 30), std::make_shared<nn::ReLU>(), ...});
//   layers->at<nn::Linear>(0).weight     // typed access
//   (*layers)[0]                         // std::shared_ptr<Module>
// forward() runs a Linear or a Conv2d directly followed by a ReLU as one fused step
// (Linear::forward_relu, Conv2d::forward_relu): the same values and the same tape, one
// intermediate tensor fewer (not in reference mode,
// core/kernel_mode.h, where each module runs its own forward).
#pragma once

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <vector>

#include <ember/nn/module.h>

namespace ember::nn {

class Sequential : public Module {
 public:
  Sequential() = default;
  Sequential(std::initializer_list<std::shared_ptr<Module>> modules);
  explicit Sequential(const std::vector<std::shared_ptr<Module>>& modules);

  // Appends a module under the next index name.
  void push_back(std::shared_ptr<Module> module);
  std::size_t size() const { return modules_.size(); }

  // Negative indices count from the end (layers[-1] is the output layer), as in PyTorch:
  // "index 5 is out of range".
  std::shared_ptr<Module> operator[](std::int64_t index) const;
  // The module at `index` as its concrete type; throws if it is another type.
  template <class ModuleType>
  ModuleType& at(std::int64_t index) const {
    auto typed = std::dynamic_pointer_cast<ModuleType>((*this)[index]);
    EMBER_CHECK(typed != nullptr, ValueError, "Sequential: module ", index, " is a ", (*this)[index]->name(),
                ", not the requested type");
    return *typed;
  }

  Tensor forward(const Tensor& input) override;

 private:
  std::vector<std::shared_ptr<Module>> modules_;
};

// A new Sequential in a shared_ptr (std::make_shared cannot forward a braced list).
std::shared_ptr<Sequential> sequential(std::initializer_list<std::shared_ptr<Module>> modules);

}  // namespace ember::nn
