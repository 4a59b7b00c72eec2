// data/sampler.cpp — SequentialSampler, RandomSampler (see sampler.h).
#include <ember/data/sampler.h>

#include <numeric>

#include <ember/core/tensor.h>

namespace ember::data {

std::int64_t draw_seed(Generator* generator) {
  Tensor seed = ember::empty({}, TensorOptions(kInt64));
  ember::random_(seed, generator);
  return seed.item<std::int64_t>();
}

SequentialSampler::SequentialSampler(std::int64_t size) : size_(size) {
  EMBER_CHECK(size >= 0, ValueError, "SequentialSampler: size must be non-negative, got ", size);
}

std::vector<std::int64_t> SequentialSampler::indices() {
  std::vector<std::int64_t> order(static_cast<std::size_t>(size_));
  std::iota(order.begin(), order.end(), std::int64_t{0});
  return order;
}

RandomSampler::RandomSampler(std::int64_t size, Generator* generator) : size_(size), generator_(generator) {
  // PyTorch refuses an empty RandomSampler the same way.
  EMBER_CHECK(size > 0, ValueError, "num_samples should be a positive integer value, but got num_samples=", size);
}

std::vector<std::int64_t> RandomSampler::indices() {
  std::vector<std::int64_t> order = begin_pass();
  end_pass();
  return order;
}

std::vector<std::int64_t> RandomSampler::begin_pass() {
  Tensor permutation;
  if (generator_ != nullptr) {
    permutation = ember::randperm(size_, TensorOptions(kInt64), generator_);
  } else {
    // PyTorch: seed = int(torch.empty((), dtype=torch.int64).random_().item());
    //          generator = torch.Generator(); generator.manual_seed(seed)
    Generator fresh(static_cast<std::uint64_t>(draw_seed(nullptr)));
    permutation = ember::randperm(size_, TensorOptions(kInt64), &fresh);
  }
  const std::int64_t* values = permutation.data_ptr<std::int64_t>();
  return std::vector<std::int64_t>(values, values + size_);
}

void RandomSampler::end_pass() {
  // PyTorch's sampler ends with `yield from randperm(n)[:num_samples % n]`, evaluated even
  // when the remainder is 0, but only once the generator is resumed past the last index.
  // With a shared generator that draw is visible in the next pass; without one it comes
  // from the pass's private generator and changes nothing outside.
  if (generator_ != nullptr) (void)ember::randperm(size_, TensorOptions(kInt64), generator_);
}

}  // namespace ember::data
