// tests/data/test_dataloader.cpp — Dataset, samplers and DataLoader: PyTorch's shuffle
// orders epoch after epoch, batching and drop_last, collation, worker threads (same
// batches for any worker count, errors reach the caller, early exit is clean).
#include <catch2/catch.hpp>

#include <atomic>
#include <stdexcept>

#include <ember/ember.h>

#include "test_support.h"

using namespace ember;
using ember::testing::load_reference;
using ember::testing::to_vector;

namespace {

// Example i is ([i], i): a batch's targets are the indices the sampler chose.
struct IndexDataset : data::Dataset {
  std::int64_t n;
  std::int64_t fail_at;
  std::atomic<int>* calls;
  explicit IndexDataset(std::int64_t n, std::int64_t fail_at = -1, std::atomic<int>* calls = nullptr)
      : n(n), fail_at(fail_at), calls(calls) {}
  data::Example get(std::int64_t i) override {
    if (calls) ++*calls;
    if (i == fail_at) throw std::runtime_error("cannot load example " + std::to_string(i));
    return {ember::full({1}, static_cast<double>(i)), ember::tensor(i)};
  }
  std::int64_t size() const override { return n; }
};

std::vector<std::vector<std::int64_t>> orders(data::DataLoader& loader, int passes) {
  std::vector<std::vector<std::int64_t>> result;
  for (int p = 0; p < passes; ++p) {
    std::vector<std::int64_t> order;
    for (auto& [x, y] : loader)
      for (double v : to_vector(y)) order.push_back(static_cast<std::int64_t>(v));
    result.push_back(order);
  }
  return result;
}

std::vector<std::vector<std::int64_t>> json_orders(const nlohmann::json& value) {
  return value.get<std::vector<std::vector<std::int64_t>>>();
}

}  // namespace

TEST_CASE("shuffled passes follow PyTorch's order after manual_seed", "[data][loader]") {
  const auto reference = load_reference("nn.json");
  manual_seed(123);
  data::DataLoader loader(std::make_shared<IndexDataset>(5), {.batch_size = 2, .shuffle = true});
  auto got = orders(loader, 3);
  REQUIRE(got == json_orders(reference["loader_shuffle_5"]));
  REQUIRE(got[0] == std::vector<std::int64_t>{3, 1, 0, 2, 4});  // the tutorial's first pass

  manual_seed(0);
  data::DataLoader dropping(std::make_shared<IndexDataset>(10), {.batch_size = 3, .shuffle = true, .drop_last = true});
  REQUIRE(dropping.size() == 3);
  REQUIRE(orders(dropping, 2) == json_orders(reference["loader_shuffle_10_drop_last"]));
}

TEST_CASE("a sequential pass still draws the base seed, as PyTorch", "[data][loader]") {
  const auto reference = load_reference("nn.json")["loader_sequential_advances"];
  manual_seed(5);
  data::DataLoader loader(std::make_shared<IndexDataset>(4), {.batch_size = 3});
  REQUIRE(orders(loader, 1) == json_orders(reference["order"]));
  REQUIRE(to_vector(ember::rand({3})) == to_vector(ember::testing::tensor_from_json(reference["rand_after"])));
}

TEST_CASE("an explicit generator drives the shuffle and leaves the default alone", "[data][loader]") {
  const auto reference = load_reference("nn.json")["loader_generator"];
  Generator generator(42);
  manual_seed(1);
  data::DataLoader loader(std::make_shared<IndexDataset>(7), {.batch_size = 2, .shuffle = true, .generator = &generator});
  REQUIRE(orders(loader, 2) == json_orders(reference["orders"]));
  REQUIRE(to_vector(ember::rand({2})) == to_vector(ember::testing::tensor_from_json(reference["rand_after"])));
}

TEST_CASE("batches are stacked examples and size() counts batches", "[data][loader]") {
  Tensor X = ember::tensor({{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}});
  Tensor y = ember::tensor({0, 1, 0});
  auto dataset = std::make_shared<data::TensorDataset>(X, y);
  REQUIRE(dataset->size() == 3);
  data::DataLoader loader(dataset, {.batch_size = 2});
  REQUIRE(loader.size() == 2);
  std::vector<data::Example> batches;
  for (auto& batch : loader) batches.push_back(batch);
  REQUIRE(batches.size() == 2);
  REQUIRE(batches[0].data.equal(ember::tensor({{1.0, 2.0}, {3.0, 4.0}})));
  REQUIRE(batches[0].target.equal(ember::tensor({0, 1})));
  REQUIRE(batches[1].data.sizes() == Shape{1, 2});
  REQUIRE(batches[1].target.dtype() == kInt64);
  // Non-contiguous source tensors are fine.
  data::TensorDataset transposed(X.t().contiguous().t(), y);
  REQUIRE(transposed.get(1).data.equal(ember::tensor({3.0, 4.0})));
  REQUIRE(transposed.get(-1).target.item<std::int64_t>() == 0);
  REQUIRE_THROWS_AS(dataset->get(3), IndexError);
  REQUIRE_THROWS_WITH((data::TensorDataset(X, ember::tensor({1, 2}))), "Size mismatch between tensors");
  REQUIRE_THROWS_AS(data::default_collate({}), ValueError);
  // Examples of different shapes cannot be stacked.
  REQUIRE_THROWS(data::default_collate({{ember::zeros({2}), ember::tensor(0)}, {ember::zeros({3}), ember::tensor(1)}}));
}

TEST_CASE("DataLoader rejects bad options with PyTorch's messages", "[data][loader]") {
  auto dataset = std::make_shared<IndexDataset>(4);
  REQUIRE_THROWS_WITH((data::DataLoader(dataset, {.batch_size = 0})),
                      "batch_size should be a positive integer value, but got batch_size=0");
  REQUIRE_THROWS_WITH((data::DataLoader(dataset, {.batch_size = 1, .num_workers = -1})),
                      "num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.");
  REQUIRE_THROWS_WITH((data::DataLoader(dataset, {.batch_size = 1, .shuffle = true,
                                                  .sampler = std::make_shared<data::SequentialSampler>(4)})),
                      "sampler option is mutually exclusive with shuffle");
  REQUIRE_THROWS_WITH(data::RandomSampler(0), "num_samples should be a positive integer value, but got num_samples=0");
  // An empty dataset gives an empty pass without shuffling.
  data::DataLoader empty(std::make_shared<IndexDataset>(0), {.batch_size = 2});
  REQUIRE(empty.size() == 0);
  REQUIRE(empty.begin() == empty.end());
}

TEST_CASE("a custom sampler decides the order", "[data][loader]") {
  struct Reverse : data::Sampler {
    std::vector<std::int64_t> indices() override { return {3, 2, 1, 0}; }
    std::int64_t size() const override { return 4; }
  };
  data::DataLoader loader(std::make_shared<IndexDataset>(4), {.batch_size = 3, .sampler = std::make_shared<Reverse>()});
  REQUIRE(orders(loader, 1)[0] == std::vector<std::int64_t>{3, 2, 1, 0});
  REQUIRE(loader.size() == 2);
  REQUIRE(std::dynamic_pointer_cast<Reverse>(loader.sampler()) != nullptr);
  data::DataLoader shuffled(std::make_shared<IndexDataset>(4), {.shuffle = true});
  REQUIRE(std::dynamic_pointer_cast<data::RandomSampler>(shuffled.sampler()) != nullptr);
}

TEST_CASE("worker threads deliver the same batches in the same order", "[data][workers]") {
  auto run = [](std::int64_t workers) {
    manual_seed(9);
    data::DataLoader loader(std::make_shared<IndexDataset>(23),
                            {.batch_size = 4, .shuffle = true, .num_workers = workers});
    return orders(loader, 3);
  };
  const auto reference = run(0);
  REQUIRE(run(1) == reference);
  REQUIRE(run(3) == reference);
  REQUIRE(run(8) == reference);
}

TEST_CASE("an exception in a worker reaches the loop and breaking early stops workers", "[data][workers]") {
  for (std::int64_t workers : {0, 2}) {
    INFO("workers " << workers);
    data::DataLoader failing(std::make_shared<IndexDataset>(10, /*fail_at=*/5), {.batch_size = 2, .num_workers = workers});
    std::vector<std::int64_t> seen;
    auto consume = [&] {
      for (auto& [x, y] : failing)
        for (double v : to_vector(y)) seen.push_back(static_cast<std::int64_t>(v));
    };
    REQUIRE_THROWS_WITH(consume(), "cannot load example 5");
    REQUIRE(seen == std::vector<std::int64_t>{0, 1, 2, 3});  // batches before the failing one arrived
  }
  std::atomic<int> calls{0};
  {
    data::DataLoader loader(std::make_shared<IndexDataset>(1000, -1, &calls), {.batch_size = 1, .num_workers = 4});
    int taken = 0;
    for (auto& batch : loader) {
      (void)batch;
      if (++taken == 3) break;  // the iterator's destructor stops and joins the workers
    }
  }
  // Workers never run further ahead than their prefetch window.
  REQUIRE(calls.load() <= 3 + 4 * 2 + 4);
}
