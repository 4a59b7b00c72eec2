// core/parallel.cpp — the persistent thread pool behind parallel_for (core/parallel.h).
//
// Tutorial appendix (performance). Starting a std::thread costs tens of microseconds, more
// than a small op takes, so the threads are started once and then wait for work. A call to
// parallel_for cuts [begin, end) into one chunk per thread and publishes them as a "region";
// the calling thread runs the first chunk itself, the pool's workers claim the others, and
// the call returns when every chunk is done, rethrowing the first exception a chunk threw.
//
// Chunks are claimed, not handed out: when the caller has finished its own chunk it claims
// whatever no worker has taken yet and runs it itself. A worker that is asleep, or that the
// hypervisor has descheduled, then costs the caller nothing but the wake-up call, and the
// caller never waits for a chunk that nobody has started, so even a few-microsecond loop can
// offer its chunks to the pool (the small GEMMs of a training step do: core/cpu/gemm.cpp).
//
// A region costs no lock and no allocation when the workers are awake: publishing it is one
// atomic store, claiming a chunk one compare-and-swap, finishing one decrement. Measured on
// this 2-core VM against the locked task queue this replaced: an empty region 0.2-0.8 us
// (was 1.2-1.5), one with 1.5 us of work per thread 2.8-2.9 us (was 3.2; a worker starts
// its chunk ~0.8 us after the caller publishes it, a chain of cache misses between cores),
// and one arriving after the workers fell asleep 2-14 us (was 55-106: the caller waited
// for the wake-up instead of running the chunk itself).
//
// Waiting spins briefly before it sleeps. A training step runs dozens of parallel regions
// a few microseconds to a millisecond apart; a worker that goes to sleep on a condition
// variable after each one must be woken for the next, and on a virtual machine waking an
// idle vCPU costs from a few to tens of microseconds, varying with the host. So a worker
// polls for the next region for kSpinBeforeSleep first, and the caller polls for the other
// chunks' completion for as long before it sleeps (OpenBLAS and OpenMP runtimes do the same,
// for longer).
//
// Rules that keep it simple and safe:
//   - a range no larger than grain_size runs inline on the caller;
//   - a parallel_for called from inside a chunk runs inline (no nested parallelism, so a
//     worker can never wait on work queued behind itself);
//   - one region at a time: a parallel_for from a second thread while another thread's region
//     runs is run inline by that second thread;
//   - set_num_threads() must not be called while parallel work is running.
#include <ember/core/parallel.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace ember {

namespace {

// True on any thread while it runs a chunk: makes nested calls run inline.
thread_local bool inside_parallel_region = false;

// How long a waiting thread polls before it sleeps (see the file comment). Short enough that a
// worker with nothing to do gives its core back quickly.
constexpr std::chrono::microseconds kSpinBeforeSleep{50};

// Polls `ready` for up to kSpinBeforeSleep; true if it became true. The clock is read only
// every 64 polls (a pause is ~40 ns on recent x86 cores, the clock ~20 ns).
template <class Ready>
bool spin_until(Ready ready) {
  const auto until = std::chrono::steady_clock::now() + kSpinBeforeSleep;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (ready()) return true;
      cpu_relax();
    }
    if (std::chrono::steady_clock::now() >= until) return ready();
  }
}

// The region's claim word: the region's generation in the high 32 bits, the number of its
// chunks nobody has claimed yet in the low 32. One word, so that a compare-and-swap can
// only ever claim a chunk of the region the claimer saw (a worker that wakes up late cannot
// take a chunk of the next region believing it belongs to the previous one).
constexpr std::uint64_t generation_of(std::uint64_t state) { return state >> 32; }
constexpr std::uint64_t unclaimed_of(std::uint64_t state) { return state & 0xffffffffu; }

class ThreadPool {
 public:
  explicit ThreadPool(int num_threads) : num_threads_(std::max(num_threads, 1)) {
    // The caller thread takes part in every region, so the pool needs one fewer.
    for (int i = 1; i < num_threads_; ++i) workers_.emplace_back([this] { worker_loop(); });
  }

  ~ThreadPool() {
    stopping_.store(true);
    {
      std::lock_guard<std::mutex> lock(sleep_mutex_);  // a worker between its check and its wait still hears this
      wake_.notify_all();
    }
    for (std::thread& worker : workers_) worker.join();
  }

  int num_threads() const { return num_threads_; }

  // Runs chunk(0) .. chunk(num_chunks - 1), chunk 0 on the calling thread. Returns false
  // without running anything if another thread's region is running.
  bool try_run(std::int64_t num_chunks, const std::function<void(std::int64_t)>& chunk) {
    std::unique_lock<std::mutex> region(region_mutex_, std::try_to_lock);
    if (!region.owns_lock()) return false;
    // These stay put until every chunk has finished, which is before the next region.
    chunk_ = &chunk;
    num_chunks_ = num_chunks;
    error_ = nullptr;
    unfinished_.store(num_chunks - 1);
    ++generation_;
    const std::uint64_t generation = generation_ & 0xffffffffu;
    state_.store(generation << 32 | static_cast<std::uint64_t>(num_chunks - 1));
    // Sequentially consistent store above and load here: either a worker about to sleep sees
    // the new region, or we see it counted in sleepers_ and wake it.
    if (sleepers_.load() > 0) {
      std::lock_guard<std::mutex> lock(sleep_mutex_);
      wake_.notify_all();
    }

    inside_parallel_region = true;
    run_chunk(0, /*counts=*/false);
    claim_and_run(generation);  // what no worker has started yet
    inside_parallel_region = false;

    // Every chunk is claimed now; the unfinished ones are running on workers.
    if (!spin_until([this] { return unfinished_.load(std::memory_order_acquire) == 0; })) {
      caller_sleeping_.store(true);
      std::unique_lock<std::mutex> lock(sleep_mutex_);
      done_.wait(lock, [this] { return unfinished_.load() == 0; });
      caller_sleeping_.store(false);
    }
    if (error_) std::rethrow_exception(error_);
    return true;
  }

 private:
  // Claims and runs chunks of region `generation` until none is left unclaimed.
  void claim_and_run(std::uint64_t generation) {
    std::uint64_t state = state_.load(std::memory_order_acquire);
    while (generation_of(state) == generation && unclaimed_of(state) > 0) {
      if (!state_.compare_exchange_weak(state, state - 1, std::memory_order_acq_rel, std::memory_order_acquire))
        continue;  // `state` now holds the current word; look again
      run_chunk(num_chunks_ - static_cast<std::int64_t>(unclaimed_of(state)), /*counts=*/true);
      state = state_.load(std::memory_order_acquire);
    }
  }

  // Runs one chunk, keeping the region's first exception. A claimed chunk (`counts`) then
  // reports that it is finished; chunk 0 is the caller's own and is not counted.
  void run_chunk(std::int64_t index, bool counts) {
    try {
      (*chunk_)(index);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex_);
      if (!error_) error_ = std::current_exception();
    }
    if (!counts) return;
    // Same pairing as for sleepers_: either the caller's last look sees 0, or we see it asleep.
    if (unfinished_.fetch_sub(1) == 1 && caller_sleeping_.load()) {
      std::lock_guard<std::mutex> lock(sleep_mutex_);
      done_.notify_all();
    }
  }

  void worker_loop() {
    inside_parallel_region = true;  // anything a worker runs is already inside a chunk
    std::uint64_t seen = 0;         // the last generation this worker looked at
    for (;;) {
      auto news = [&] { return stopping_.load(std::memory_order_relaxed) || generation_of(state_.load()) != seen; };
      if (!spin_until(news)) {
        sleepers_.fetch_add(1);
        {
          std::unique_lock<std::mutex> lock(sleep_mutex_);
          wake_.wait(lock, news);
        }
        sleepers_.fetch_sub(1);
      }
      if (stopping_.load()) return;
      seen = generation_of(state_.load());
      claim_and_run(seen);
    }
  }

  int num_threads_;
  std::vector<std::thread> workers_;

  // The current region, written by its caller before it publishes state_. A worker reads
  // these only while it holds a claimed chunk, and the caller starts no other region before
  // every claimed chunk has finished, so they cannot change under it.
  std::mutex region_mutex_;  // held by the caller for the whole region
  const std::function<void(std::int64_t)>* chunk_ = nullptr;
  std::int64_t num_chunks_ = 0;
  std::uint64_t generation_ = 0;  // the caller's count of regions (only its low 32 bits are published)
  std::mutex error_mutex_;
  std::exception_ptr error_;

  // Each on a cache line of its own: the caller polls unfinished_ while workers claim from state_.
  alignas(64) std::atomic<std::uint64_t> state_{0};  // generation and unclaimed chunks (generation_of, unclaimed_of)
  alignas(64) std::atomic<std::int64_t> unfinished_{0};  // claimed chunks not yet finished, plus unclaimed ones
  alignas(64) std::atomic<int> sleepers_{0};

  // Sleeping, for workers with no region and a caller waiting long for one.
  std::mutex sleep_mutex_;
  std::condition_variable wake_, done_;
  std::atomic<bool> caller_sleeping_{false}, stopping_{false};
};

int default_num_threads() {
  unsigned hardware = std::thread::hardware_concurrency();
  return hardware == 0 ? 1 : static_cast<int>(hardware);
}

std::mutex pool_mutex;  // guards the pointer below, not the pool's work
std::unique_ptr<ThreadPool>& pool_slot() {
  static std::unique_ptr<ThreadPool> pool;
  return pool;
}

ThreadPool& pool() {
  std::lock_guard<std::mutex> lock(pool_mutex);
  auto& slot = pool_slot();
  if (!slot) slot = std::make_unique<ThreadPool>(default_num_threads());
  return *slot;
}

}  // namespace

void parallel_for(std::int64_t begin, std::int64_t end, std::int64_t grain_size,
                  const std::function<void(std::int64_t, std::int64_t)>& body) {
  if (begin >= end) return;
  std::int64_t length = end - begin;
  grain_size = std::max<std::int64_t>(grain_size, 1);
  if (inside_parallel_region || length <= grain_size) {
    body(begin, end);
    return;
  }
  ThreadPool& threads = pool();
  // No more chunks than threads, and no chunk smaller than the grain size.
  const std::int64_t num_chunks =
      std::min<std::int64_t>(threads.num_threads(), (length + grain_size - 1) / grain_size);
  if (num_chunks <= 1) {
    body(begin, end);
    return;
  }
  // Chunk c covers [begin + length*c/n, begin + length*(c+1)/n): sizes differ by at most one.
  // (One captured pointer, so the std::function needs no heap allocation.)
  struct Range {
    std::int64_t begin, length, num_chunks;
    const std::function<void(std::int64_t, std::int64_t)>* body;
    std::int64_t start(std::int64_t chunk) const { return begin + length * chunk / num_chunks; }
  } range{begin, length, num_chunks, &body};
  const std::function<void(std::int64_t)> chunk = [r = &range](std::int64_t index) {
    (*r->body)(r->start(index), r->start(index + 1));
  };
  if (!threads.try_run(num_chunks, chunk)) body(begin, end);  // another thread's region is running
}

int get_num_threads() { return pool().num_threads(); }

void set_num_threads(int threads) {
  std::lock_guard<std::mutex> lock(pool_mutex);
  pool_slot() = std::make_unique<ThreadPool>(std::max(threads, 1));
}

}  // namespace ember
