// tests/data/test_sampler_passes.cpp — passes that stop early (break) or run to the end, and
// what the next pass shuffles, against PyTorch (tests/reference/gen_sampler_passes.py).
// PyTorch's RandomSampler is lazy: with an explicit generator its trailing permutation is
// drawn only when a pass reaches its end, so a `break` changes the next pass's order.
#include <catch2/catch.hpp>

#include <ember/ember.h>

#include "test_support.h"

using namespace ember;
using ember::testing::load_reference;
using ember::testing::tensor_from_json;
using ember::testing::to_vector;

namespace {

// Example i is (i, i): a batch's targets are the indices the sampler chose.
struct IndexDataset : data::Dataset {
  std::int64_t n;
  explicit IndexDataset(std::int64_t n) : n(n) {}
  data::Example get(std::int64_t i) override { return {ember::tensor(i), ember::tensor(i)}; }
  std::int64_t size() const override { return n; }
};

using Batches = std::vector<std::vector<std::int64_t>>;

// One pass that leaves the loop after batch `break_after` (-1: runs to the end).
Batches run_pass(data::DataLoader& loader, std::int64_t break_after) {
  Batches seen;
  std::int64_t k = 0;
  for (auto& [x, y] : loader) {
    std::vector<std::int64_t> batch;
    for (double v : to_vector(y)) batch.push_back(static_cast<std::int64_t>(v));
    seen.push_back(batch);
    if (k++ == break_after) break;
  }
  return seen;
}

}  // namespace

TEST_CASE("a pass left with break draws what PyTorch's lazy sampler draws", "[data][loader][sampler]") {
  const auto reference = load_reference("sampler_passes.json");
  for (const auto& scenario : reference["scenarios"]) {
    for (std::int64_t workers : {0, 2}) {  // the sampler's draws never depend on the workers
      INFO(scenario["name"].get<std::string>() << ", num_workers " << workers);
      Generator generator(42);
      manual_seed(42);
      const bool explicit_generator = scenario["explicit_generator"].get<bool>();
      data::DataLoader loader(std::make_shared<IndexDataset>(scenario["n"].get<std::int64_t>()),
                              {.batch_size = scenario["batch_size"].get<std::int64_t>(),
                               .shuffle = true,
                               .num_workers = workers,
                               .drop_last = scenario["drop_last"].get<bool>(),
                               .generator = explicit_generator ? &generator : nullptr});
      const auto plan = scenario["break_after"].get<std::vector<std::int64_t>>();
      for (std::size_t p = 0; p < plan.size(); ++p) {
        INFO("pass " << p);
        REQUIRE(run_pass(loader, plan[p]) == scenario["passes"][p].get<Batches>());
      }
      const Tensor after = explicit_generator ? ember::rand({3}, TensorOptions(), &generator) : ember::rand({3});
      REQUIRE(to_vector(after) == to_vector(tensor_from_json(scenario["rand_after"])));
    }
  }
}

TEST_CASE("the brief's case: n=7, batch 2, Generator(42), break after the first batch", "[data][loader][sampler]") {
  Generator generator(42);
  data::DataLoader loader(std::make_shared<IndexDataset>(7), {.batch_size = 2, .shuffle = true, .generator = &generator});
  REQUIRE(run_pass(loader, 0) == Batches{{4, 5}});
  REQUIRE(run_pass(loader, -1) == Batches{{0, 5}, {2, 1}, {4, 3}, {6}});  // PyTorch's next pass
}

TEST_CASE("RandomSampler::indices() is a whole pass, trailing draw included", "[data][sampler]") {
  // list(RandomSampler(range(7), generator=g)) twice equals two complete loader passes.
  Generator a(3), b(3);
  data::RandomSampler whole(7, &a);
  data::RandomSampler split(7, &b);
  for (int pass = 0; pass < 3; ++pass) {
    const auto order = split.begin_pass();
    split.end_pass();
    REQUIRE(whole.indices() == order);
  }
  // Without the trailing draw the streams part: begin_pass alone is not a whole pass.
  REQUIRE(split.begin_pass() == whole.indices());  // no end_pass this time
  REQUIRE(split.begin_pass() != whole.indices());  // now one permutation behind
}
