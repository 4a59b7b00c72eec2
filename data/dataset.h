// data/dataset.h — the Dataset interface and TensorDataset (PyTorch: torch.utils.data.Dataset).
//
// Tutorial §6: "the three main components of a custom Dataset class are the __init__
// constructor, the __getitem__ method, and the __len__ method". In ember a dataset derives
// from data::Dataset and overrides get(index) (= __getitem__) and size() (= __len__):
//   struct ToyDataset : ember::data::Dataset {
//     ember::Tensor features, labels;
//     ToyDataset(ember::Tensor x, ember::Tensor y) : features(x), labels(y) {}
//     ember::data::Example get(int64_t i) override { return {features[i], labels[i]}; }
//     int64_t size() const override { return labels.size(0); }
//   };
// get() may be called from several DataLoader worker threads at once: it must not modify
// shared state (reading tensors is fine).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <ember/core/tensor.h>

namespace ember::data {

// One training example, or (after collation) one batch: the tutorial's (x, y) pair.
// An aggregate, so `auto& [features, labels] = example;` works.
struct Example {
  Tensor data;
  Tensor target;
};

class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual Example get(std::int64_t index) = 0;
  virtual std::int64_t size() const = 0;
  // The examples at `indices` already collated, exactly as default_collate would stack
  // get(i) for each, when the dataset can gather them in one go (PyTorch's __getitems__).
  // The DataLoader asks first when its collate is default_collate; the default says no
  // (nullopt), and the DataLoader calls get() per index. Called from workers like get().
  virtual std::optional<Example> get_batch(const std::vector<std::int64_t>& indices);
};

// Row i of `data` and element i of `targets` (PyTorch's TensorDataset for two tensors).
// Both must have the same first dimension: "Size mismatch between tensors".
class TensorDataset : public Dataset {
 public:
  TensorDataset(Tensor data, Tensor targets);
  Example get(std::int64_t index) override;
  std::int64_t size() const override;
  // One index_select per tensor instead of a select per example and a stack: the same
  // batch, bit for bit, for a fraction of the per-example cost.
  std::optional<Example> get_batch(const std::vector<std::int64_t>& indices) override;

  const Tensor& data() const { return data_; }
  const Tensor& targets() const { return targets_; }

 private:
  Tensor data_;
  Tensor targets_;
};

}  // namespace ember::data
