// apps/cli/spec_layer_reader.h — reads one layer of a `--model spec:FILE` list (model_spec.cpp):
// each argument's JSON type and range checked, PyTorch's default filled in when it is left out,
// and any key never read reported as an unknown argument. Every problem is a ValueError
// "layer 3 (Conv2d): ..." naming the layer's index and the argument.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <ember/core/error.h>

#include "model.h"

namespace ember::cli {

// One layer's arguments as they are read: types and ranges checked, PyTorch's defaults filled
// in, the resolved layer written to `resolved` in reading order; keys never read are unknown.
class LayerReader {
 public:
  using Json = nlohmann::ordered_json;

  LayerReader(const Json& layer, std::size_t index, std::string type) : layer_(layer), index_(index), type_(type) {
    resolved["type"] = std::move(type);
  }

  [[noreturn]] void fail(const std::string& problem) const {
    throw ValueError(make_message("layer ", index_, " (", type_, "): ", problem));
  }
  [[noreturn]] void fail(const std::string& key, const std::string& expected) const {
    fail("\"" + key + "\" must be " + expected + ", got " + layer_.at(key).dump());
  }

  // The value of `key`, or nullptr when absent or null.
  const Json* find(const std::string& key) {
    read_.push_back(key);
    auto found = layer_.find(key);
    return found == layer_.end() || found->is_null() ? nullptr : &*found;
  }
  bool given(const std::string& key) { return find(key) != nullptr; }
  // Whether `key` is there as an explicit null (PyTorch's None where that means something).
  bool null_given(const std::string& key) {
    read_.push_back(key);
    auto found = layer_.find(key);
    return found != layer_.end() && found->is_null();
  }

  std::int64_t integer(const std::string& key, std::optional<std::int64_t> fallback, std::int64_t low,
                       std::int64_t high) {
    const Json* value = find(key);
    if (value == nullptr) {
      if (!fallback) fail(make_message("needs \"", key, "\""));
      resolved[key] = *fallback;
      return *fallback;
    }
    if (!value->is_number_integer() || value->get<std::int64_t>() < low ||
        (value->is_number_unsigned() && value->get<std::uint64_t>() > static_cast<std::uint64_t>(high)) ||
        value->get<std::int64_t>() > high) {
      fail(key, make_message("an integer in [", low, ", ", high, "]"));
    }
    resolved[key] = value->get<std::int64_t>();
    return value->get<std::int64_t>();
  }

  double number(const std::string& key, double fallback, double low, double high) {
    const Json* value = find(key);
    double result = fallback;
    if (value != nullptr) {
      if (!value->is_number() || !(value->get<double>() >= low && value->get<double>() <= high)) {
        fail(key, make_message("a number in [", low, ", ", high, "]"));
      }
      result = value->get<double>();
    }
    resolved[key] = result;
    return result;
  }

  bool boolean(const std::string& key, bool fallback) {
    const Json* value = find(key);
    if (value != nullptr && !value->is_boolean()) fail(key, "true or false");
    const bool result = value != nullptr ? value->get<bool>() : fallback;
    resolved[key] = result;
    return result;
  }

  std::string choice(const std::string& key, const std::string& fallback, const std::vector<std::string>& allowed) {
    const Json* value = find(key);
    std::string result = fallback;
    if (value != nullptr) {
      const bool known = value->is_string() &&
                         std::find(allowed.begin(), allowed.end(), value->get<std::string>()) != allowed.end();
      if (!known) {
        std::string names;
        for (const std::string& name : allowed) names += (names.empty() ? "\"" : ", \"") + name + "\"";
        fail(key, "one of " + names);
      }
      result = value->get<std::string>();
    }
    resolved[key] = result;
    return result;
  }

  // An int-or-pair argument (kernel_size=3 or [3, 5]), kept in the form given (PyTorch's
  // pooling reprs print it so). Returns one value per spatial dim.
  std::array<std::int64_t, 2> pair(const std::string& key, std::optional<Json> fallback, std::int64_t low) {
    const Json* value = find(key);
    if (value == nullptr) {
      if (!fallback) fail(make_message("needs \"", key, "\""));
      resolved[key] = *fallback;
      value = &resolved[key];
    }
    auto in_range = [&](const Json& v) {
      return v.is_number_integer() && v.get<std::int64_t>() >= low &&
             !(v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(kMaxLayerWidth)) &&
             v.get<std::int64_t>() <= kMaxLayerWidth;
    };
    const bool single = in_range(*value);
    const bool two = value->is_array() && value->size() == 2 && in_range((*value)[0]) && in_range((*value)[1]);
    if (!single && !two) fail(key, make_message("an integer in [", low, ", ", kMaxLayerWidth, "] or a list of two"));
    resolved[key] = *value;
    if (single) return {value->get<std::int64_t>(), value->get<std::int64_t>()};
    return {(*value)[0].get<std::int64_t>(), (*value)[1].get<std::int64_t>()};
  }

  // After all arguments were read: anything else in the layer is a mistake.
  void finish(const std::string& arguments) const {
    for (const auto& [key, value] : layer_.items()) {
      if (key == "type" || std::find(read_.begin(), read_.end(), key) != read_.end()) continue;
      fail("unknown argument \"" + key + "\" (" + type_ + " takes " + (arguments.empty() ? "none" : arguments) + ")");
    }
  }

  Json resolved;

 private:
  const Json& layer_;
  std::size_t index_;
  std::string type_;
  std::vector<std::string> read_;
};

}  // namespace ember::cli
