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
//                      With an explicit generator it draws from it directly, plus one
//                      discarded permutation when a pass runs to its end (begin_pass /
//                      end_pass below), so a pass left with `break` draws less, as in PyTorch.
// A distributed sampler (each process sees its share) plugs in through the same interface.
#pragma once

#include <cstdint>
#include <vector>

#include <ember/core/random.h>

namespace ember::data {

class Sampler {
 public:
  virtual ~Sampler() = default;
  // The indices of one whole pass, with every draw the pass makes (list(sampler) in PyTorch).
  virtual std::vector<std::int64_t> indices() = 0;
  // How many indices one pass yields.
  virtual std::int64_t size() const = 0;

  // How a DataLoader runs a pass. PyTorch's samplers are lazy Python generators: code
  // after the last index runs only if the loader asks for one more index. So the loader
  // calls begin_pass() for the order and end_pass() only when its pass runs to the end
  // (never after a `break`). By default the whole pass happens in begin_pass().
  virtual std::vector<std::int64_t> begin_pass() { return indices(); }
  virtual void end_pass() {}
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
  // begin_pass() + end_pass().
  std::vector<std::int64_t> indices() override;
  std::int64_t size() const override { return size_; }
  // The permutation (after drawing its seed when there is no generator of its own).
  std::vector<std::int64_t> begin_pass() override;
  // With an explicit generator, PyTorch's trailing `randperm(n)[:num_samples % n]`: one
  // more permutation drawn and discarded, only when the pass reaches its end.
  void end_pass() override;

 private:
  std::int64_t size_;
  Generator* generator_;
};

// One int64 drawn like torch.empty((), dtype=torch.int64).random_(generator).item():
// how PyTorch's DataLoader makes its base seed and RandomSampler its shuffle seed.
std::int64_t draw_seed(Generator* generator = nullptr);

}  // namespace ember::data
