// nn/ordered_dict.h — a small insertion-ordered map from names to values.
//
// PyTorch keeps a module's parameters, buffers and children in OrderedDicts: the order in
// which a module registers things is the order named_parameters() and print(model) show
// them, and the order state_dict() lists them. std::map would sort the names
// ("layers.10" before "layers.2"), so ember keeps a vector plus an index.
#pragma once

#include <cstddef>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ember::nn {

template <class Value>
class OrderedDict {
 public:
  using Item = std::pair<std::string, Value>;

  // Inserts a new key at the end, or replaces the value of an existing key in place.
  Value& insert(const std::string& key, Value value) {
    auto found = index_.find(key);
    if (found != index_.end()) {
      items_[found->second].second = std::move(value);
      return items_[found->second].second;
    }
    index_.emplace(key, items_.size());
    items_.emplace_back(key, std::move(value));
    return items_.back().second;
  }
  bool contains(const std::string& key) const { return index_.count(key) != 0; }
  // nullptr when absent.
  Value* find(const std::string& key) {
    auto found = index_.find(key);
    return found == index_.end() ? nullptr : &items_[found->second].second;
  }
  const Value* find(const std::string& key) const {
    auto found = index_.find(key);
    return found == index_.end() ? nullptr : &items_[found->second].second;
  }
  Value& at(const std::string& key) { return items_.at(index_.at(key)).second; }
  const Value& at(const std::string& key) const { return items_.at(index_.at(key)).second; }

  std::size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  const std::vector<Item>& items() const { return items_; }
  std::vector<std::string> keys() const {
    std::vector<std::string> result;
    for (const auto& item : items_) result.push_back(item.first);
    return result;
  }
  auto begin() { return items_.begin(); }
  auto end() { return items_.end(); }
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }

 private:
  std::vector<Item> items_;
  std::unordered_map<std::string, std::size_t> index_;
};

}  // namespace ember::nn
