// distributed/distributed_sampler.h — each process takes its own share of the dataset.
//
// Tutorial §9.3 (torch.utils.data.distributed.DistributedSampler), index for index the same
// as PyTorch's:
//   num_samples = ceil(N / R)              (drop_last: ceil((N - R) / R) when R does not divide N)
//   total_size  = num_samples * R
//   order       = shuffle ? randperm(N) drawn from a Generator seeded with seed + epoch
//                         : 0, 1, ..., N-1
//   padded by repeating the order from its start up to total_size (or cut to total_size
//   with drop_last), then rank r takes order[r], order[r + R], order[r + 2R], ...
// Call set_epoch(e) before each epoch: otherwise every epoch shuffles the same way.
// It is a data::Sampler, so it plugs into DataLoaderOptions::sampler.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <ember/data/sampler.h>

namespace ember::distributed {

class DistributedSampler : public data::Sampler {
 public:
  // num_replicas / rank unset: taken from the default process group (which must exist).
  // Errors (ValueError): "Invalid rank 3, rank should be in the interval [0, 1]".
  explicit DistributedSampler(std::int64_t dataset_size, std::optional<int> num_replicas = std::nullopt,
                              std::optional<int> rank = std::nullopt, bool shuffle = true,
                              std::uint64_t seed = 0, bool drop_last = false);

  std::vector<std::int64_t> indices() override;
  std::int64_t size() const override { return num_samples_; }
  void set_epoch(std::int64_t epoch) { epoch_ = epoch; }
  std::int64_t epoch() const { return epoch_; }
  std::int64_t total_size() const { return total_size_; }

 private:
  std::int64_t dataset_size_;
  int num_replicas_;
  int rank_;
  bool shuffle_;
  std::uint64_t seed_;
  bool drop_last_;
  std::int64_t epoch_ = 0;
  std::int64_t num_samples_;
  std::int64_t total_size_;
};

}  // namespace ember::distributed
