// tests/distributed/test_distributed_sampler.cpp — DistributedSampler vs PyTorch's index lists.
//
// tests/reference/gen_distributed_sampler.py records, for each case, every rank's indices
// for epochs 0..2 from torch.utils.data.distributed.DistributedSampler (torch 2.15).
#include <catch2/catch.hpp>

#include <ember/ember.h>

#include "test_support.h"

namespace dist = ember::distributed;

TEST_CASE("distributed sampler: indices equal PyTorch's for every rank and epoch", "[distributed][sampler]") {
  const auto reference = ember::testing::load_reference("distributed_sampler.json");
  REQUIRE(reference["cases"].size() >= 10);
  for (const auto& item : reference["cases"]) {
    const int replicas = item["num_replicas"];
    for (int rank = 0; rank < replicas; ++rank) {
      INFO("n " << item["n"] << " replicas " << replicas << " rank " << rank << " shuffle " << item["shuffle"]
                << " seed " << item["seed"] << " drop_last " << item["drop_last"]);
      dist::DistributedSampler sampler(item["n"].get<std::int64_t>(), replicas, rank, item["shuffle"].get<bool>(),
                                       item["seed"].get<std::uint64_t>(), item["drop_last"].get<bool>());
      const auto& expected = item["ranks"][rank];
      REQUIRE(sampler.size() == expected["len"].get<std::int64_t>());
      for (int epoch = 0; epoch < 3; ++epoch) {
        sampler.set_epoch(epoch);
        REQUIRE(sampler.indices() == expected["epochs"][epoch].get<std::vector<std::int64_t>>());
      }
    }
  }
}

TEST_CASE("distributed sampler: ranks partition the padded data, the same epoch repeats", "[distributed][sampler]") {
  dist::DistributedSampler first(10, 3, 0, true, 5), second(10, 3, 1, true, 5), third(10, 3, 2, true, 5);
  std::vector<std::int64_t> all;
  for (auto* sampler : {&first, &second, &third}) {
    auto part = sampler->indices();
    all.insert(all.end(), part.begin(), part.end());
  }
  std::sort(all.begin(), all.end());
  // 12 = 3 ranks × ceil(10 / 3): every index once plus two repeated for padding.
  REQUIRE(all.size() == 12);
  REQUIRE(std::unique(all.begin(), all.end()) - all.begin() == 10);
  REQUIRE(first.indices() == first.indices());  // no set_epoch: the same order again
}

TEST_CASE("distributed sampler: errors", "[distributed][sampler]") {
  REQUIRE_THROWS_WITH(dist::DistributedSampler(10, 2, 2), "Invalid rank 2, rank should be in the interval [0, 1]");
  REQUIRE_THROWS_AS(dist::DistributedSampler(10, 2, -1), ember::ValueError);
  REQUIRE_THROWS_AS(dist::DistributedSampler(10, 0, 0), ember::ValueError);
  // Without num_replicas/rank it needs the default process group.
  REQUIRE_THROWS_WITH(dist::DistributedSampler(10),
                      "Default process group has not been initialized, please make sure to call init_process_group.");
}

TEST_CASE("distributed sampler: plugs into the DataLoader as its sampler", "[distributed][sampler]") {
  auto dataset = std::make_shared<ember::data::TensorDataset>(ember::arange(10).reshape({10, 1}), ember::arange(10));
  auto sampler = std::make_shared<dist::DistributedSampler>(10, 2, 1, /*shuffle=*/false);
  ember::data::DataLoaderOptions options;
  options.batch_size = 2;
  options.sampler = sampler;
  ember::data::DataLoader loader(dataset, options);
  REQUIRE(loader.size() == 3);  // 5 indices of rank 1, batches of 2 -> 3 batches
  std::vector<std::int64_t> seen;
  for (auto& batch : loader) {
    auto values = ember::testing::to_vector(batch.target);
    seen.insert(seen.end(), values.begin(), values.end());
  }
  REQUIRE(seen == std::vector<std::int64_t>{1, 3, 5, 7, 9});
}
