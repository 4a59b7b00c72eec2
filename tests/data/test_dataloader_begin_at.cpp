// tests/data/test_dataloader_begin_at.cpp — DataLoader::begin_at: a pass resumed at a batch
// yields exactly the rest of the whole pass (what `ember train --save-every` resumes with),
// for any worker count, without loading the skipped batches, with the same random draws
// (the next pass shuffles alike), and the sampler's end_pass where a whole pass runs it.
#include <catch2/catch.hpp>

#include <atomic>

#include <ember/ember.h>

#include "test_support.h"

using namespace ember;
using ember::testing::to_vector;

namespace {

// Example i is ([i], i), counting the loads.
struct CountingDataset : data::Dataset {
  std::int64_t n;
  std::atomic<int>* loads;
  CountingDataset(std::int64_t n, std::atomic<int>* loads) : n(n), loads(loads) {}
  data::Example get(std::int64_t i) override {
    ++*loads;
    return {ember::full({1}, static_cast<double>(i)), ember::tensor(i)};
  }
  std::int64_t size() const override { return n; }
};

using Batches = std::vector<std::vector<std::int64_t>>;

Batches rest_of_pass(data::DataLoader::Iterator it, data::DataLoader& loader) {
  Batches batches;
  for (; it != loader.end(); ++it) {
    std::vector<std::int64_t> batch;
    for (double v : to_vector(it->target)) batch.push_back(static_cast<std::int64_t>(v));
    batches.push_back(batch);
  }
  return batches;
}

// Counts end_pass calls of a sequential order.
struct EndCountingSampler : data::Sampler {
  std::int64_t n;
  int ends = 0;
  explicit EndCountingSampler(std::int64_t n) : n(n) {}
  std::vector<std::int64_t> indices() override {
    std::vector<std::int64_t> order;
    for (std::int64_t i = 0; i < n; ++i) order.push_back(i);
    return order;
  }
  std::int64_t size() const override { return n; }
  void end_pass() override { ++ends; }
};

}  // namespace

TEST_CASE("DataLoader::begin_at yields the rest of the whole pass, for any worker count", "[data][loader][resume]") {
  for (std::int64_t workers : {0, 1, 3}) {
    for (bool drop_last : {false, true}) {
      INFO("workers " << workers << ", drop_last " << drop_last);
      std::atomic<int> loads{0};
      auto dataset = std::make_shared<CountingDataset>(23, &loads);
      data::DataLoaderOptions options{.batch_size = 4, .shuffle = true, .num_workers = workers, .drop_last = drop_last};
      manual_seed(11);
      data::DataLoader whole(dataset, options);
      Batches reference = rest_of_pass(whole.begin(), whole);
      Batches next_reference = rest_of_pass(whole.begin(), whole);
      REQUIRE(reference.size() == static_cast<std::size_t>(whole.size()));

      for (std::int64_t first = 0; first <= whole.size(); ++first) {
        INFO("first batch " << first);
        manual_seed(11);
        data::DataLoader resumed(dataset, options);
        loads = 0;
        Batches rest = rest_of_pass(resumed.begin_at(first), resumed);
        CHECK(rest == Batches(reference.begin() + first, reference.end()));
        // Only the batches handed out were loaded (workers start at `first`).
        std::int64_t expected_loads = 0;
        for (const auto& batch : rest) expected_loads += static_cast<std::int64_t>(batch.size());
        CHECK(loads.load() == expected_loads);
        // The same draws as a whole pass: the next pass shuffles as the whole run's did.
        CHECK(rest_of_pass(resumed.begin(), resumed) == next_reference);
      }
    }
  }
}

TEST_CASE("DataLoader::begin_at runs the sampler's end_pass once, as a whole pass does", "[data][loader][resume]") {
  std::atomic<int> loads{0};
  auto dataset = std::make_shared<CountingDataset>(10, &loads);
  for (bool drop_last : {false, true}) {
    for (std::int64_t first = 0; first <= 3; ++first) {  // 10 / 4: batches 4, 4, 2 (or 4, 4 with drop_last)
      auto sampler = std::make_shared<EndCountingSampler>(10);
      data::DataLoader loader(dataset, {.batch_size = 4, .drop_last = drop_last, .sampler = sampler});
      if (first > loader.size()) continue;
      INFO("drop_last " << drop_last << ", first batch " << first);
      rest_of_pass(loader.begin_at(first), loader);
      CHECK(sampler->ends == 1);
    }
  }
}

TEST_CASE("DataLoader::begin_at refuses a batch outside the pass", "[data][loader][resume]") {
  std::atomic<int> loads{0};
  data::DataLoader loader(std::make_shared<CountingDataset>(10, &loads), {.batch_size = 4});
  CHECK_THROWS_AS(loader.begin_at(4), ValueError);
  CHECK_THROWS_WITH(loader.begin_at(4), "DataLoader::begin_at: first_batch 4 is outside [0, 3] (the batches of one pass)");
  CHECK_THROWS_AS(loader.begin_at(-1), ValueError);
}
