// tests/data/test_dataloader_pin_memory.cpp — DataLoader's pin_memory option
// (data/dataloader.cpp; PyTorch: DataLoader(..., pin_memory=True)).
//
// Runs on every machine: with a GPU each batch comes back in pinned memory; without one the
// option is ignored as PyTorch does (with its warning), and the batches are unchanged in
// both cases, with and without worker threads.
#include <catch2/catch.hpp>

#include <ember/ember.h>

using namespace ember;

namespace {

struct SquaresDataset : data::Dataset {
  data::Example get(std::int64_t i) override {
    return {ember::full({3}, static_cast<double>(i * i)), ember::tensor(i)};
  }
  std::int64_t size() const override { return 10; }
};

}  // namespace

TEST_CASE("DataLoader pin_memory: batches are pinned exactly when a GPU is present, values unchanged",
          "[data][loader][pinned]") {
  auto dataset = std::make_shared<SquaresDataset>();
  for (std::int64_t workers : {0, 2}) {
    INFO("num_workers = " << workers);
    data::DataLoaderOptions plain_options{.batch_size = 3, .num_workers = workers};
    data::DataLoaderOptions pinned_options = plain_options;
    pinned_options.pin_memory = true;
    data::DataLoader plain(dataset, plain_options), pinned(dataset, pinned_options);
    REQUIRE(pinned.options().pin_memory);  // the requested value is kept, as loader.pin_memory
    std::vector<data::Example> expected;
    for (auto& batch : plain) expected.push_back(batch);
    std::size_t count = 0;
    for (auto& batch : pinned) {
      REQUIRE(count < expected.size());
      REQUIRE(batch.data.equal(expected[count].data));
      REQUIRE(batch.target.equal(expected[count].target));
      REQUIRE(batch.data.is_pinned() == cuda::is_available());
      REQUIRE(batch.target.is_pinned() == cuda::is_available());
      REQUIRE_FALSE(expected[count].data.is_pinned());
      ++count;
    }
    REQUIRE(count == expected.size());
  }
}
