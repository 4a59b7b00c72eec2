// nn/lr_state.h — a learning-rate scheduler's state_dict entries as tensors, and the
// checked reading of them back (used by nn/lr_scheduler.cpp, lr_one_cycle.cpp, lr_plateau.cpp).
//
// PyTorch's scheduler state_dict is a Python dict of numbers and lists; ember's is a
// StateDict (like an optimizer's) so that it saves with ember::save: whole numbers as 0-d
// int64, real numbers as 0-d float64, flags as 0-d bool, lists as 1-d tensors. Reading
// collects every problem (a missing key, a wrong shape or dtype, a key nobody read) so
// that load_state_dict can throw one ValueError listing them all and change nothing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ember/core/tensor.h>
#include <ember/nn/module.h>

namespace ember::optim::lr_scheduler {

using nn::StateDict;

Tensor state_tensor(double value);
Tensor state_tensor(std::int64_t value);
Tensor state_tensor(bool value);
Tensor state_tensor(const std::vector<double>& values);
Tensor state_tensor(const std::vector<std::int64_t>& values);

class StateReader {
 public:
  explicit StateReader(const StateDict& state) : state_(state) {}
  double number(const std::string& key);             // a 0-d real number (int or float)
  std::int64_t whole_number(const std::string& key);  // a 0-d integer tensor
  bool flag(const std::string& key);                  // a 0-d bool
  std::vector<double> real_list(const std::string& key);
  std::vector<std::int64_t> whole_number_list(const std::string& key);
  void reject(const std::string& problem) { problems_.push_back(problem); }
  bool ok() const { return missing_.empty() && problems_.empty(); }
  // Throws "Error(s) in loading state_dict for <scheduler>:" with the missing keys, the keys
  // never read and every problem (PyTorch's layout for module and optimizer state dicts);
  // does nothing when there are none.
  void throw_if_problems(const std::string& scheduler) const;

 private:
  const Tensor* find(const std::string& key);
  const StateDict& state_;
  std::vector<std::string> read_, missing_, problems_;
};

}  // namespace ember::optim::lr_scheduler
