// tests/data/test_get_batch.cpp — Dataset::get_batch (PyTorch's __getitems__): TensorDataset
// gathers a batch in one go, bit for bit what default_collate makes of get() per index, and
// the DataLoader uses it only where default_collate would have stacked the examples.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstring>
#include <vector>

#include <ember/ember.h>

#include "test_support.h"

using namespace ember;
using ember::testing::to_vector;

namespace {

bool same_bytes(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.sizes() != b.sizes() || !a.is_contiguous() || !b.is_contiguous()) return false;
  const std::size_t bytes = static_cast<std::size_t>(a.numel()) * a.element_size();
  return bytes == 0 || std::memcmp(a.data_ptr(), b.data_ptr(), bytes) == 0;
}

// Counts how the DataLoader reached the examples.
struct CountingDataset : data::TensorDataset {
  using data::TensorDataset::TensorDataset;
  std::atomic<int> gets{0}, batches{0};
  data::Example get(std::int64_t index) override {
    ++gets;
    return data::TensorDataset::get(index);
  }
  std::optional<data::Example> get_batch(const std::vector<std::int64_t>& indices) override {
    ++batches;
    return data::TensorDataset::get_batch(indices);
  }
};

}  // namespace

TEST_CASE("TensorDataset::get_batch is default_collate of get() per index, bit for bit") {
  manual_seed(3);
  // Features of several dtypes and ranks, targets 1-D (0-d examples) and 2-D; a
  // non-contiguous data tensor (a transposed view) too.
  const std::vector<std::pair<Tensor, Tensor>> cases = {
      {randn({7, 3, 2}), arange(7)},
      {randint(0, 255, {7, 4}).to(kUInt8), randn({7, 2})},
      {randn({3, 7}).t(), arange(7).to(kFloat64)},
  };
  const std::vector<std::int64_t> indices = {6, 0, 3, 3, -1, -7, 2};
  for (const auto& [features, targets] : cases) {
    data::TensorDataset dataset(features, targets);
    std::vector<data::Example> examples;
    for (std::int64_t index : indices) examples.push_back(dataset.get(index));
    const data::Example stacked = data::default_collate(examples);
    const std::optional<data::Example> gathered = dataset.get_batch(indices);
    REQUIRE(gathered.has_value());
    CHECK(same_bytes(gathered->data, stacked.data));
    CHECK(same_bytes(gathered->target, stacked.target));
  }
}

TEST_CASE("TensorDataset::get_batch refuses an index out of range with get()'s message") {
  data::TensorDataset dataset(randn({4, 2}), arange(4));
  CHECK_THROWS_WITH(dataset.get_batch({0, 4}), "index 4 is out of bounds for dimension 0 with size 4");
  CHECK_THROWS_WITH(dataset.get_batch({-5}), "index -5 is out of bounds for dimension 0 with size 4");
  CHECK_THROWS_AS(dataset.get_batch({9}), IndexError);
  // An empty batch has no example to take the shape from: the per-example path decides.
  CHECK_FALSE(dataset.get_batch({}).has_value());
}

TEST_CASE("DataLoader: get_batch serves default_collate's batches, get() every other collate") {
  auto dataset = std::make_shared<CountingDataset>(randn({10, 3}), arange(10));
  data::DataLoaderOptions options;
  options.batch_size = 4;
  std::vector<std::vector<double>> fast;
  for (const data::Example& batch : data::DataLoader(dataset, options)) fast.push_back(to_vector(batch.data));
  CHECK(dataset->batches == 3);
  CHECK(dataset->gets == 0);

  // A collate of its own sees the examples one by one, as it asked.
  options.collate = [](const std::vector<data::Example>& examples) { return data::default_collate(examples); };
  std::vector<std::vector<double>> slow;
  for (const data::Example& batch : data::DataLoader(dataset, options)) slow.push_back(to_vector(batch.data));
  CHECK(dataset->batches == 3);
  CHECK(dataset->gets == 10);
  CHECK(fast == slow);

  // With workers, the same batches in the same order.
  options.collate = data::default_collate;
  options.num_workers = 2;
  std::vector<std::vector<double>> threaded;
  for (const data::Example& batch : data::DataLoader(dataset, options)) threaded.push_back(to_vector(batch.data));
  CHECK(threaded == fast);
}

TEST_CASE("A Dataset that does not gather says so, and the DataLoader loads its examples one by one") {
  struct Plain : data::Dataset {
    Tensor values = arange(5).to(kFloat32);
    data::Example get(std::int64_t index) override { return {values[index], values[index]}; }
    std::int64_t size() const override { return 5; }
  };
  auto dataset = std::make_shared<Plain>();
  CHECK_FALSE(dataset->get_batch({0, 1}).has_value());
  data::DataLoaderOptions options;
  options.batch_size = 2;
  std::vector<double> seen;
  for (const data::Example& batch : data::DataLoader(dataset, options)) {
    for (double value : to_vector(batch.data)) seen.push_back(value);
  }
  CHECK(seen == std::vector<double>{0, 1, 2, 3, 4});
}
