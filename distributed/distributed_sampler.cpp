// distributed/distributed_sampler.cpp — PyTorch's DistributedSampler, step for step.
//
// Tutorial §9.3. The arithmetic below is torch/utils/data/distributed.py's: a learner can
// put the two side by side. The shuffle must be identical on every rank (each rank then
// takes a disjoint stride of the *same* order), which is why the generator is seeded with
// seed + epoch and never with anything rank-specific.
#include <ember/distributed/distributed_sampler.h>

#include <ember/core/error.h>
#include <ember/core/random.h>
#include <ember/distributed/process_group.h>

namespace ember::distributed {
namespace {

// ceil(a / b) for a >= 0, b > 0 (math.ceil in PyTorch's code).
std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

}  // namespace

DistributedSampler::DistributedSampler(std::int64_t dataset_size, std::optional<int> num_replicas,
                                       std::optional<int> rank, bool shuffle, std::uint64_t seed, bool drop_last)
    : dataset_size_(dataset_size), shuffle_(shuffle), seed_(seed), drop_last_(drop_last) {
  EMBER_CHECK(dataset_size >= 0, ValueError, "DistributedSampler: dataset size must be non-negative, got ", dataset_size);
  // Like PyTorch, an unset replica count or rank comes from the default process group.
  num_replicas_ = num_replicas ? *num_replicas : get_world_size();
  rank_ = rank ? *rank : get_rank();
  EMBER_CHECK(num_replicas_ >= 1, ValueError, "DistributedSampler: num_replicas must be positive, got ", num_replicas_);
  EMBER_CHECK(rank_ >= 0 && rank_ < num_replicas_, ValueError, "Invalid rank ", rank_,
              ", rank should be in the interval [0, ", num_replicas_ - 1, "]");
  const std::int64_t replicas = num_replicas_;
  if (drop_last_ && dataset_size_ % replicas != 0) {
    // Drop the tail so that every rank gets the same amount of *real* data.
    num_samples_ = ceil_div(dataset_size_ - replicas, replicas);
  } else {
    num_samples_ = ceil_div(dataset_size_, replicas);
  }
  total_size_ = num_samples_ * replicas;
}

std::vector<std::int64_t> DistributedSampler::indices() {
  std::vector<std::int64_t> order(static_cast<std::size_t>(dataset_size_));
  if (shuffle_) {
    Generator generator(seed_ + static_cast<std::uint64_t>(epoch_));
    Tensor permutation = randperm(dataset_size_, TensorOptions(kInt64), &generator);
    const std::int64_t* values = permutation.data_ptr<std::int64_t>();
    for (std::int64_t i = 0; i < dataset_size_; ++i) order[static_cast<std::size_t>(i)] = values[i];
  } else {
    for (std::int64_t i = 0; i < dataset_size_; ++i) order[static_cast<std::size_t>(i)] = i;
  }
  if (!drop_last_) {
    // Pad by repeating the order from its start (several times if the data is tiny).
    const std::size_t original = order.size();
    for (std::size_t i = 0; order.size() < static_cast<std::size_t>(total_size_) && original > 0; ++i)
      order.push_back(order[i % original]);
  } else {
    order.resize(static_cast<std::size_t>(total_size_));
  }
  std::vector<std::int64_t> mine;
  mine.reserve(static_cast<std::size_t>(num_samples_));
  for (std::int64_t i = rank_; i < total_size_; i += num_replicas_) mine.push_back(order[static_cast<std::size_t>(i)]);
  return mine;
}

}  // namespace ember::distributed
