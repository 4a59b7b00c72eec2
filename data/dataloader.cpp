// data/dataloader.cpp — DataLoader's passes and worker threads (see dataloader.h).
#include <ember/data/dataloader.h>

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <functional>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>

#include <ember/core/cuda_hooks.h>
#include <ember/core/native.h>
#include <ember/core/profiler.h>

namespace ember::data {

namespace detail {
std::function<void(std::int64_t)> before_worker_start;
}  // namespace detail

namespace {
// Whether `collate` is default_collate itself, the one Dataset::get_batch stands in for.
bool is_default_collate(const CollateFunction& collate) {
  using Pointer = Example (*)(const std::vector<Example>&);
  const Pointer* target = collate.target<Pointer>();
  return target != nullptr && *target == &default_collate;
}
}  // namespace

// One pass over the data. Without workers, next() loads each batch on demand. With
// workers, each thread repeatedly claims the next batch number (never more than
// `prefetch_limit` ahead of the consumer), loads it, and files the result under its
// number; next() waits for exactly the number it needs, which is what keeps the order.
//
// The sampler's end_pass() runs on the consumer's thread when the consumer asks for batch
// number `sampler_ends_at` (see begin()), whatever the workers have prefetched, so the
// random stream does not depend on num_workers either.
class DataLoader::Pass {
 public:
  Pass(std::shared_ptr<Dataset> dataset, CollateFunction collate, std::vector<std::vector<std::int64_t>> batches,
       std::int64_t num_workers, std::int64_t prefetch_factor, bool pin_memory, std::int64_t sampler_ends_at,
       std::function<void()> end_sampler_pass, std::int64_t first_batch)
      : dataset_(std::move(dataset)), collate_(std::move(collate)), batches_(std::move(batches)),
        pin_memory_(pin_memory), next_to_deliver_(first_batch), sampler_ends_at_(sampler_ends_at),
        end_sampler_pass_(std::move(end_sampler_pass)), next_to_claim_(first_batch), delivered_(first_batch) {
    // A pass resumed past the point where the sampler ends: that happened before the skip.
    if (first_batch > sampler_ends_at_) requested(sampler_ends_at_);
    prefetch_limit_ = num_workers * std::max<std::int64_t>(prefetch_factor, 1);
    // A thread that cannot start (the system's thread or memory limit) throws
    // std::system_error; the workers already running are stopped and joined before the
    // error leaves, as an ember::Error (a std::thread destroyed while joinable would call
    // std::terminate).
    workers_.reserve(static_cast<std::size_t>(num_workers));
    for (std::int64_t w = 0; w < num_workers; ++w) {
      try {
        if (detail::before_worker_start) detail::before_worker_start(w);
        workers_.emplace_back([this, w] { worker_loop(w); });
      } catch (const std::system_error& error) {
        stop_workers();
        throw Error(make_message("DataLoader: could not start worker thread ", w + 1, " of ", num_workers, " (",
                                 error.what(), "); use fewer workers (num_workers)"));
      }
    }
  }

  ~Pass() { stop_workers(); }
  Pass(const Pass&) = delete;
  Pass& operator=(const Pass&) = delete;

  std::int64_t batch_count() const { return static_cast<std::int64_t>(batches_.size()); }
  bool finished() const { return next_to_deliver_ >= static_cast<std::int64_t>(batches_.size()); }

  // The consumer asks for batch `batch_number` (batches_.size(): the one after the last).
  void requested(std::int64_t batch_number) {
    if (batch_number != sampler_ends_at_ || sampler_ended_) return;
    sampler_ended_ = true;
    end_sampler_pass_();
  }

  // The next batch in order; rethrows what its loading threw.
  Example next() {
    const profiler::RecordScope scope(profiler::EventKind::Annotation, "DataLoader.next");
    const std::int64_t wanted = next_to_deliver_++;
    requested(wanted);
    if (workers_.empty()) return load(wanted);
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return ready_.count(wanted) != 0; });
    Result result = std::move(ready_.at(wanted));
    ready_.erase(wanted);
    delivered_ = wanted + 1;
    lock.unlock();
    changed_.notify_all();  // a worker may wait for room in the prefetch window
    if (result.error) std::rethrow_exception(result.error);
    return std::move(result.batch);
  }

 private:
  struct Result {
    Example batch;
    std::exception_ptr error;
  };

  void stop_workers() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    for (auto& worker : workers_) worker.join();
    workers_.clear();
  }

  Example load(std::int64_t batch_number) {
    const profiler::RecordScope scope(profiler::EventKind::Annotation, "DataLoader.load_batch");
    const std::vector<std::int64_t>& indices = batches_[static_cast<std::size_t>(batch_number)];
    // A dataset that gathers a batch in one go (Dataset::get_batch) skips the per-example
    // path, when default_collate is what would have stacked the examples.
    std::optional<Example> gathered = uses_default_collate_ ? dataset_->get_batch(indices) : std::nullopt;
    Example batch;
    if (gathered) {
      batch = std::move(*gathered);
    } else {
      std::vector<Example> examples;
      for (std::int64_t index : indices) examples.push_back(dataset_->get(index));
      batch = collate_(examples);
    }
    if (pin_memory_) {  // core's native::pin_memory: data needs no autograd and no CUDA header
      if (batch.data.defined() && batch.data.is_cpu()) batch.data = native::pin_memory(batch.data);
      if (batch.target.defined() && batch.target.is_cpu()) batch.target = native::pin_memory(batch.target);
    }
    return batch;
  }

  void worker_loop(std::int64_t worker) {
    profiler::set_thread_name("DataLoader worker " + std::to_string(worker));  // its track in a profile
    const auto total = static_cast<std::int64_t>(batches_.size());
    while (true) {
      std::int64_t claimed = 0;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] {
          return stopping_ || next_to_claim_ >= total || next_to_claim_ < delivered_ + prefetch_limit_;
        });
        if (stopping_ || next_to_claim_ >= total) return;
        claimed = next_to_claim_++;
      }
      Result result;
      try {
        result.batch = load(claimed);
      } catch (...) {
        result.error = std::current_exception();  // delivered to the consumer at this batch
      }
      {
        std::lock_guard<std::mutex> lock(mutex_);
        ready_.emplace(claimed, std::move(result));
      }
      changed_.notify_all();
    }
  }

  std::shared_ptr<Dataset> dataset_;
  CollateFunction collate_;
  bool uses_default_collate_ = is_default_collate(collate_);
  std::vector<std::vector<std::int64_t>> batches_;
  bool pin_memory_ = false;
  std::int64_t next_to_deliver_ = 0;  // consumer thread only
  std::int64_t sampler_ends_at_;
  std::function<void()> end_sampler_pass_;
  bool sampler_ended_ = false;  // consumer thread only

  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::int64_t, Result> ready_;
  std::int64_t next_to_claim_ = 0;
  std::int64_t delivered_ = 0;
  std::int64_t prefetch_limit_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

DataLoader::DataLoader(std::shared_ptr<Dataset> dataset, DataLoaderOptions options)
    : dataset_(std::move(dataset)), options_(std::move(options)) {
  EMBER_CHECK(dataset_ != nullptr, ValueError, "DataLoader: dataset must not be null");
  EMBER_CHECK(options_.batch_size > 0, ValueError, "batch_size should be a positive integer value, but got batch_size=",
              options_.batch_size);
  EMBER_CHECK(options_.num_workers >= 0, ValueError,
              "num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.");
  EMBER_CHECK(!(options_.sampler && options_.shuffle), ValueError, "sampler option is mutually exclusive with shuffle");
  EMBER_CHECK(static_cast<bool>(options_.collate), ValueError, "DataLoader: collate function must be set");
  if (options_.sampler) {
    sampler_ = options_.sampler;
  } else if (options_.shuffle) {
    sampler_ = std::make_shared<RandomSampler>(dataset_->size(), options_.generator);
  } else {
    sampler_ = std::make_shared<SequentialSampler>(dataset_->size());
  }
}

std::int64_t DataLoader::size() const {
  const std::int64_t n = sampler_->size();
  // ceil(n / batch_size) without n + batch_size - 1, which overflows for batch_size near
  // INT64_MAX (it reported 0 batches for a loader that yields 1).
  const std::int64_t full_batches = n / options_.batch_size;
  return options_.drop_last || n % options_.batch_size == 0 ? full_batches : full_batches + 1;
}

DataLoader::Iterator DataLoader::begin() { return begin_at(0); }

DataLoader::Iterator DataLoader::begin_at(std::int64_t first_batch) {
  EMBER_CHECK(first_batch >= 0 && first_batch <= size(), ValueError, "DataLoader::begin_at: first_batch ", first_batch,
              " is outside [0, ", size(), "] (the batches of one pass)");
  // PyTorch's _BaseDataLoaderIter draws its base seed first, then the sampler its own.
  (void)draw_seed(options_.generator);
  const std::vector<std::int64_t> order = sampler_->begin_pass();
  std::vector<std::vector<std::int64_t>> batches;
  for (std::size_t start = 0; start < order.size(); start += static_cast<std::size_t>(options_.batch_size)) {
    const std::size_t stop = std::min(order.size(), start + static_cast<std::size_t>(options_.batch_size));
    if (options_.drop_last && stop - start < static_cast<std::size_t>(options_.batch_size)) break;
    batches.emplace_back(order.begin() + static_cast<std::ptrdiff_t>(start),
                         order.begin() + static_cast<std::ptrdiff_t>(stop));
  }
  // PyTorch pins only when an accelerator is present and warns otherwise (options() keeps
  // the requested value, as loader.pin_memory does).
  const bool pin = options_.pin_memory && cuda::is_available();
  if (options_.pin_memory && !pin && !warned_no_pin_) {
    std::cerr << "UserWarning: 'pin_memory' argument is set as true but no accelerator is found, then device pinned "
                 "memory won't be used.\n";
    warned_no_pin_ = true;
  }
  // PyTorch's batch sampler asks its sampler for one index past the last — which resumes
  // the sampler's generator to its end — while it gathers a short last batch (drop_last
  // off), and otherwise only when the batch after the last one is asked for.
  const std::int64_t batch_size = options_.batch_size;
  const bool short_last_batch = !options_.drop_last && static_cast<std::int64_t>(order.size()) % batch_size != 0;
  const auto batch_count = static_cast<std::int64_t>(batches.size());
  const std::int64_t sampler_ends_at = short_last_batch ? batch_count - 1 : batch_count;
  auto pass = std::make_shared<Pass>(dataset_, options_.collate, std::move(batches), options_.num_workers,
                                     options_.prefetch_factor, pin, sampler_ends_at,
                                     [sampler = sampler_] { sampler->end_pass(); }, first_batch);
  return Iterator(std::move(pass));
}

DataLoader::Iterator::Iterator(std::shared_ptr<Pass> pass) : pass_(std::move(pass)) { advance(); }

DataLoader::Iterator& DataLoader::Iterator::operator++() {
  advance();
  return *this;
}

void DataLoader::Iterator::advance() {
  if (!pass_) return;
  try {
    if (pass_->finished()) {
      pass_->requested(pass_->batch_count());  // the loop asked for one more: the pass ran to its end
      pass_.reset();  // joins the workers: this iterator now equals end()
      current_ = Example{};
      return;
    }
    current_ = pass_->next();
  } catch (...) {
    pass_.reset();  // stop the workers before the error leaves the loop
    throw;
  }
}

}  // namespace ember::data
