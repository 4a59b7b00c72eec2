// data/sampler.h — samplers: which example indices one pass over the data visits, in order.
//
// Tutorial §6: with shuffle=True "you should get the exact same shuffling order" after
// torch.manual_seed(123), and "if you iterate over the dataset a second time, you will see
// that the shuffling order will change". A sampler produces the index order of one pass;
// the DataLoader asks for a fresh order at the start of every pass (every `for` loop).
//   SequentialSampler  0, 1, ..., n-1
//   RandomSampler      a random permutation, drawn exactly as PyTorch draws it: without
//                      its own generator it first takes a seed from the default generator
//                      (random_() on a 0-d int64 tensor) and shuffles with randperm on a
//                      fresh Generator seeded with it — so the default generator advances by
//                      one draw per pass, and the orders match PyTorch's epoch after epoch.
// A distributed sampler (each process sees its share) plugs in through the same interface.
#pragma once

#include <cstdint>
#include <vector>

#include <ember/core/random.h>

namespace ember::data {

class Sampler {
 public:
  virtual ~Sampler() = default;
  // The indices of one pass (called once at the start of each pass).
  virtual std::vector<std::int64_t> indices() = 0;
  // How many indices one pass yields.
  virtual std::int64_t size() const = 0;
};

class SequentialSampler : public Sampler {
 public:
  explicit SequentialSampler(std::int64_t size);
  std::vector<std::int64_t> indices() override;
  std::int64_t size() const override { return size_; }

 private:
  std::int64_t size_;
};

class RandomSampler : public Sampler {
 public:
  // generator == nullptr: seed a fresh Generator from the default generator each pass.
  // The generator, if given, must outlive the sampler.
  explicit RandomSampler(std::int64_t size, Generator* generator = nullptr);
  std::vector<std::int64_t> indices() override;
  std::int64_t size() const override { return size_; }

 private:
  std::int64_t size_;
  Generator* generator_;
};

// One int64 drawn like torch.empty((), dtype=torch.int64).random_(generator).item():
// how PyTorch's DataLoader makes its base seed and RandomSampler its shuffle seed.
std::int64_t draw_seed(Generator* generator = nullptr);

}  // namespace ember::data
