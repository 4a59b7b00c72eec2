// tests/data/test_dataloader_batch_count.cpp — DataLoader::size() (the number of batches)
// agrees with what a pass yields, up to batch_size = INT64_MAX (data/dataloader.cpp;
// PyTorch: len(DataLoader) is ceil(len(dataset) / batch_size), or floor with drop_last).
#include <catch2/catch.hpp>

#include <limits>

#include <ember/ember.h>

using namespace ember;

namespace {

struct CountingDataset : data::Dataset {
  std::int64_t n;
  explicit CountingDataset(std::int64_t n) : n(n) {}
  data::Example get(std::int64_t i) override { return {ember::full({1}, static_cast<double>(i)), ember::tensor(i)}; }
  std::int64_t size() const override { return n; }
};

std::int64_t batches_yielded(data::DataLoader& loader) {
  std::int64_t count = 0;
  for (auto& batch : loader) {
    (void)batch;
    ++count;
  }
  return count;
}

}  // namespace

TEST_CASE("DataLoader::size() matches the batches yielded, even for batch_size = INT64_MAX", "[data][loader]") {
  constexpr std::int64_t kHuge = std::numeric_limits<std::int64_t>::max();
  auto dataset = std::make_shared<CountingDataset>(5);
  struct Case {
    std::int64_t batch_size;
    std::int64_t batches, batches_drop_last;  // len(DataLoader) in PyTorch, for 5 examples
  };
  for (const Case& c : {Case{1, 5, 5}, Case{2, 3, 2}, Case{5, 1, 1}, Case{7, 1, 0}, Case{kHuge - 1, 1, 0},
                        Case{kHuge, 1, 0}}) {
    for (bool drop_last : {false, true}) {
      INFO("batch_size " << c.batch_size << ", drop_last " << drop_last);
      data::DataLoader loader(dataset, {.batch_size = c.batch_size, .drop_last = drop_last});
      // Before the fix, (5 + INT64_MAX - 1) / INT64_MAX overflowed: 0 batches reported, 1 yielded.
      CHECK(loader.size() == (drop_last ? c.batches_drop_last : c.batches));
      CHECK(batches_yielded(loader) == loader.size());
    }
  }
}
