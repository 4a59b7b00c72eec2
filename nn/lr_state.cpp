// nn/lr_state.cpp — scheduler state entries as tensors and their checked reading (see lr_state.h).
#include <ember/nn/lr_state.h>

#include <algorithm>

#include <ember/core/error.h>
#include <ember/core/factories.h>
#include <ember/core/print.h>

namespace ember::optim::lr_scheduler {

Tensor state_tensor(double value) { return ember::full({}, value, kFloat64); }
Tensor state_tensor(std::int64_t value) { return ember::full({}, value, kInt64); }
Tensor state_tensor(bool value) { return ember::full({}, value, kBool); }

Tensor state_tensor(const std::vector<double>& values) {
  Tensor result = ember::zeros({static_cast<std::int64_t>(values.size())}, kFloat64);
  std::copy(values.begin(), values.end(), result.data_ptr<double>());
  return result;
}

Tensor state_tensor(const std::vector<std::int64_t>& values) {
  Tensor result = ember::zeros({static_cast<std::int64_t>(values.size())}, kInt64);
  std::copy(values.begin(), values.end(), result.data_ptr<std::int64_t>());
  return result;
}

const Tensor* StateReader::find(const std::string& key) {
  read_.push_back(key);
  const Tensor* value = state_.find(key);
  if (value == nullptr) {
    missing_.push_back(key);
    return nullptr;
  }
  if (!value->defined()) {
    problems_.push_back(key + " is an undefined tensor");
    return nullptr;
  }
  return value;
}

namespace {
std::string described(const Tensor& value) {
  return std::string("a ") + dtype_name(value.dtype()) + " tensor of shape " + size_string(value.sizes());
}
bool is_integral(const Tensor& value) {
  return !value.is_floating_point() && value.dtype() != kBool;
}
}  // namespace

double StateReader::number(const std::string& key) {
  const Tensor* value = find(key);
  if (value == nullptr) return 0.0;
  if (value->dim() != 0 || value->dtype() == kBool) {
    problems_.push_back(key + " must be a 0-d number, got " + described(*value));
    return 0.0;
  }
  return value->cpu().item<double>();
}

std::int64_t StateReader::whole_number(const std::string& key) {
  const Tensor* value = find(key);
  if (value == nullptr) return 0;
  if (value->dim() != 0 || !is_integral(*value)) {
    problems_.push_back(key + " must be a 0-d integer, got " + described(*value));
    return 0;
  }
  return value->cpu().item<std::int64_t>();
}

bool StateReader::flag(const std::string& key) {
  const Tensor* value = find(key);
  if (value == nullptr) return false;
  if (value->dim() != 0 || value->dtype() != kBool) {
    problems_.push_back(key + " must be a 0-d bool, got " + described(*value));
    return false;
  }
  return value->cpu().item<bool>();
}

std::vector<double> StateReader::real_list(const std::string& key) {
  const Tensor* value = find(key);
  if (value == nullptr) return {};
  if (value->dim() != 1 || value->dtype() == kBool) {
    problems_.push_back(key + " must be a 1-d list of numbers, got " + described(*value));
    return {};
  }
  Tensor values = value->cpu().to(kFloat64).contiguous();
  const double* data = values.data_ptr<double>();
  return std::vector<double>(data, data + values.numel());
}

std::vector<std::int64_t> StateReader::whole_number_list(const std::string& key) {
  const Tensor* value = find(key);
  if (value == nullptr) return {};
  if (value->dim() != 1 || !is_integral(*value)) {
    problems_.push_back(key + " must be a 1-d list of integers, got " + described(*value));
    return {};
  }
  Tensor values = value->cpu().to(kInt64).contiguous();
  const std::int64_t* data = values.data_ptr<std::int64_t>();
  return std::vector<std::int64_t>(data, data + values.numel());
}

void StateReader::throw_if_problems(const std::string& scheduler) const {
  std::vector<std::string> unexpected;
  for (const auto& [key, value] : state_) {
    if (std::find(read_.begin(), read_.end(), key) == read_.end()) unexpected.push_back(key);
  }
  if (ok() && unexpected.empty()) return;
  auto quoted = [](const std::vector<std::string>& keys) {
    std::string text;
    for (std::size_t i = 0; i < keys.size(); ++i) text += (i ? ", \"" : "\"") + keys[i] + "\"";
    return text;
  };
  std::string message = "Error(s) in loading state_dict for " + scheduler + ":";
  if (!missing_.empty()) message += "\n\tMissing key(s) in state_dict: " + quoted(missing_) + ". ";
  if (!unexpected.empty()) message += "\n\tUnexpected key(s) in state_dict: " + quoted(unexpected) + ". ";
  for (const std::string& problem : problems_) message += "\n\t" + problem;
  throw ValueError(message);
}

}  // namespace ember::optim::lr_scheduler
