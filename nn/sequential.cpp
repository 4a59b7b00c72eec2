// nn/sequential.cpp — nn::Sequential (see sequential.h). Its forward fuses a Linear (bias +
// ReLU, issue 8) or a Conv2d (issue 19) directly followed by a ReLU without changing values
// or the tape.
#include <ember/nn/sequential.h>

#include <string>
#include <typeinfo>

#include <ember/core/kernel_mode.h>
#include <ember/nn/activation.h>
#include <ember/nn/conv.h>
#include <ember/nn/linear.h>

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

namespace {
// Exactly nn::Linear / nn::ReLU, not a subclass that may override forward.
bool is_exactly_linear(const Module& module) { return typeid(module) == typeid(Linear); }
bool is_exactly_conv2d(const Module& module) { return typeid(module) == typeid(Conv2d); }
bool is_exactly_relu(const Module& module) { return typeid(module) == typeid(ReLU); }
}  // namespace

Tensor Sequential::forward(const Tensor& input) {
  Tensor output = input;
  // Reference mode (core/kernel_mode.h) runs every module on its own: Linear, then ReLU.
  const bool fuse = kernel_mode() == KernelMode::Fast;
  for (std::size_t i = 0; i < modules_.size(); ++i) {
    // Linear then ReLU: one fused step (bias + ReLU, Linear::forward_relu). Same values,
    // same tape, one tensor and one pass fewer.
    if (fuse && i + 1 < modules_.size() && is_exactly_linear(*modules_[i]) && is_exactly_relu(*modules_[i + 1])) {
      output = static_cast<Linear&>(*modules_[i]).forward_relu(output);
      ++i;
      continue;
    }
    if (fuse && i + 1 < modules_.size() && is_exactly_conv2d(*modules_[i]) && is_exactly_relu(*modules_[i + 1])) {
      output = static_cast<Conv2d&>(*modules_[i]).forward_relu(output);  // likewise, Conv2d::forward_relu
      ++i;
      continue;
    }
    output = modules_[i]->forward(output);
  }
  return output;
}

std::shared_ptr<Sequential> sequential(std::initializer_list<std::shared_ptr<Module>> modules) {
  return std::make_shared<Sequential>(modules);
}

}  // namespace ember::nn
