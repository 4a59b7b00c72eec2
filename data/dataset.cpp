// data/dataset.cpp — TensorDataset (see dataset.h). The data layer sits on core only, so
// it indexes with ember::native (no autograd: a batch of inputs is never a graph node).
#include <ember/data/dataset.h>

#include <ember/core/native.h>

namespace ember::data {

TensorDataset::TensorDataset(Tensor data, Tensor targets) : data_(std::move(data)), targets_(std::move(targets)) {
  EMBER_CHECK(data_.defined() && targets_.defined(), ValueError, "TensorDataset: both tensors must be defined");
  EMBER_CHECK(data_.dim() >= 1 && targets_.dim() >= 1 && data_.size(0) == targets_.size(0), ShapeError,
              "Size mismatch between tensors");
}

Example TensorDataset::get(std::int64_t index) {
  const std::int64_t n = size();
  EMBER_CHECK(index >= -n && index < n, IndexError, "index ", index, " is out of bounds for dimension 0 with size ", n);
  return {native::select(data_, 0, index), native::select(targets_, 0, index)};
}

std::int64_t TensorDataset::size() const { return data_.size(0); }

}  // namespace ember::data
