// data/dataloader.h — DataLoader: batches from a Dataset, shuffled, optionally prefetched
// by worker threads (PyTorch: torch.utils.data.DataLoader).
//
// Tutorial §6:
//   train_loader = DataLoader(dataset=train_ds, batch_size=2, shuffle=True, num_workers=0)
//   for idx, (x, y) in enumerate(train_loader): ...
// In ember:
//   ember::data::DataLoader train_loader(train_ds, {.batch_size = 2, .shuffle = true});
//   for (auto& [x, y] : train_loader) { ... }
//
// One pass (one `for` loop, one call to begin()):
//   1. draws a base seed from the generator (as PyTorch does for its workers, even when
//      there are none — it keeps the random stream identical to PyTorch's);
//   2. asks the sampler for this pass's index order (RandomSampler reshuffles);
//   3. cuts the order into batches of batch_size (drop_last drops a short last batch);
//   4. loads each batch — get(i) for each index, then collate, then (pin_memory) copy it
//      into pinned host memory — either right here (num_workers = 0) or in worker threads
//      that run ahead of the consumer;
//   5. if the pass runs to its end, lets the sampler finish (Sampler::end_pass: an
//      explicitly seeded RandomSampler draws PyTorch's trailing permutation), at the batch
//      where PyTorch's lazy sampler would; a `break` skips it, as in PyTorch.
// Workers take batch numbers in order and results are handed out strictly in batch order,
// so what the loop sees is identical for any num_workers. An exception thrown inside a
// worker is re-thrown to the loop at that batch; leaving the loop early (break) stops and
// joins the workers when the iterator is destroyed. A worker thread that cannot be started
// (the system's thread or memory limit) stops and joins those already started, and begin()
// throws an ember::Error "DataLoader: could not start worker thread K of N (...)".
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include <ember/core/random.h>
#include <ember/data/collate.h>
#include <ember/data/dataset.h>
#include <ember/data/sampler.h>

namespace ember::data {

namespace detail {
// Test seam: when set, called before each worker thread is started (with its index); a
// std::system_error thrown from it acts as a failed thread start. Not for production use.
extern std::function<void(std::int64_t worker)> before_worker_start;
}  // namespace detail

struct DataLoaderOptions {
  std::int64_t batch_size = 1;
  bool shuffle = false;
  std::int64_t num_workers = 0;
  bool drop_last = false;
  // Replaces the sequential/random choice (mutually exclusive with shuffle).
  std::shared_ptr<Sampler> sampler = nullptr;
  // Used for the base seed and, with shuffle, by the RandomSampler; nullptr: the default
  // generator. Must outlive the loader.
  Generator* generator = nullptr;
  // Each worker keeps up to this many batches ready ahead of the consumer.
  std::int64_t prefetch_factor = 2;
  CollateFunction collate = default_collate;
  // Put each batch's tensors in pinned host memory (Tensor::pin_memory) as it is loaded, so
  // batch.to(device, /*non_blocking=*/true) is a fast asynchronous copy. Without a GPU it
  // is ignored with PyTorch's warning (printed once per loader to stderr).
  bool pin_memory = false;
};

class DataLoader {
 public:
  DataLoader(std::shared_ptr<Dataset> dataset, DataLoaderOptions options = {});

  // Number of batches in one pass (len(loader) in PyTorch): draws nothing.
  std::int64_t size() const;
  const DataLoaderOptions& options() const { return options_; }
  const std::shared_ptr<Dataset>& dataset() const { return dataset_; }
  // The sampler in use (the given one, or the Sequential/Random one chosen by shuffle),
  // e.g. to tell a distributed sampler which epoch starts next.
  const std::shared_ptr<Sampler>& sampler() const { return sampler_; }

  class Pass;  // one pass's batches and workers (dataloader.cpp)

  class Iterator {
   public:
    using value_type = Example;
    using difference_type = std::ptrdiff_t;
    Iterator() = default;  // the end sentinel
    explicit Iterator(std::shared_ptr<Pass> pass);
    Example& operator*() { return current_; }
    Example* operator->() { return &current_; }
    Iterator& operator++();
    bool operator==(const Iterator& other) const { return done() == other.done(); }
    bool operator!=(const Iterator& other) const { return !(*this == other); }

   private:
    bool done() const { return pass_ == nullptr; }
    void advance();
    std::shared_ptr<Pass> pass_;
    Example current_;
  };

  // Starts a new pass: draws the seeds and (with workers) starts the threads.
  Iterator begin();
  // Starts a new pass that skips its first `first_batch` batches without loading them:
  // the same draws as begin() (seeds, the sampler's order), so a pass resumed mid-way
  // (`ember train --save-every`) yields exactly the batches the whole pass would have
  // yielded from there on, with any num_workers (the workers start at that batch). The
  // sampler's end_pass runs where a whole pass would run it, or at once when the skipped
  // batches include that point. first_batch in [0, size()] (size(): an empty pass).
  // PyTorch's DataLoader has no such call (torchdata's StatefulDataLoader does this with
  // its state_dict).
  Iterator begin_at(std::int64_t first_batch);
  Iterator end() { return Iterator(); }

 private:
  std::shared_ptr<Dataset> dataset_;
  DataLoaderOptions options_;
  std::shared_ptr<Sampler> sampler_;
  bool warned_no_pin_ = false;
};

}  // namespace ember::data
