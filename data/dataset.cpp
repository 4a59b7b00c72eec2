// data/dataset.cpp — TensorDataset (see dataset.h). The data layer sits on core only, so
// it indexes with ember::native (no autograd: a batch of inputs is never a graph node).
#include <ember/data/dataset.h>

#include <ember/core/factories.h>
#include <ember/core/native.h>

namespace ember::data {

TensorDataset::TensorDataset(Tensor data, Tensor targets) : data_(std::move(data)), targets_(std::move(targets)) {
  EMBER_CHECK(data_.defined() && targets_.defined(), ValueError, "TensorDataset: both tensors must be defined");
  EMBER_CHECK(data_.dim() >= 1 && targets_.dim() >= 1 && data_.size(0) == targets_.size(0), ShapeError,
              "Size mismatch between tensors");
}

std::optional<Example> Dataset::get_batch(const std::vector<std::int64_t>&) { return std::nullopt; }

Example TensorDataset::get(std::int64_t index) {
  const std::int64_t n = size();
  EMBER_CHECK(index >= -n && index < n, IndexError, "index ", index, " is out of bounds for dimension 0 with size ", n);
  return {native::select(data_, 0, index), native::select(targets_, 0, index)};
}

std::optional<Example> TensorDataset::get_batch(const std::vector<std::int64_t>& indices) {
  // default_collate stacks on the CPU what get() returns, wherever the tensors live; an
  // empty batch has no example to take the shape from. Both: the per-example path.
  if (indices.empty() || !data_.is_cpu() || !targets_.is_cpu()) return std::nullopt;
  const std::int64_t n = size();
  Tensor rows = empty({static_cast<std::int64_t>(indices.size())}, dtype(kInt64));
  std::int64_t* out = rows.data_ptr<std::int64_t>();
  for (std::size_t i = 0; i < indices.size(); ++i) {
    const std::int64_t index = indices[i];
    EMBER_CHECK(index >= -n && index < n, IndexError, "index ", index, " is out of bounds for dimension 0 with size ", n);
    out[i] = index < 0 ? index + n : index;
  }
  return Example{native::index_select(data_, 0, rows), native::index_select(targets_, 0, rows)};
}

std::int64_t TensorDataset::size() const { return data_.size(0); }

}  // namespace ember::data
