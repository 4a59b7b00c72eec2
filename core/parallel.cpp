// core/parallel.cpp — the persistent thread pool behind parallel_for (core/parallel.h).
//
// Tutorial appendix (performance). Starting a std::thread costs tens of microseconds, more
// than a small op takes, so the threads are started once and then wait for work. A call to
// parallel_for cuts [begin, end) into one chunk per thread; the calling thread runs the
// first chunk itself and the pool's workers run the others. The call returns when every
// chunk is done, and rethrows the first exception a chunk threw.
//
// Rules that keep it simple and safe:
//   - a range no larger than grain_size runs inline on the caller (no locking at all);
//   - a parallel_for called from inside a chunk runs inline (no nested parallelism, so a
//     worker can never wait on work queued behind itself);
//   - set_num_threads() must not be called while parallel work is running.
//
// Waiting spins briefly before it sleeps. A training step runs dozens of parallel regions
// a few microseconds to a millisecond apart; a worker that goes to sleep on a condition
// variable after each one must be woken for the next, and on a virtual machine waking an
// idle vCPU costs from a few to tens of microseconds, varying with the host. So a worker
// polls for the next task for kSpinBeforeSleep first, and the caller polls for the other
// chunks' completion for as long before it sleeps (OpenBLAS and OpenMP runtimes do the same,
// for longer).
#include <ember/core/parallel.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
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

class ThreadPool {
 public:
  explicit ThreadPool(int num_threads) : num_threads_(std::max(num_threads, 1)) {
    // The caller thread takes part in every parallel_for, so the pool needs one fewer.
    for (int i = 1; i < num_threads_; ++i) workers_.emplace_back([this] { worker_loop(); });
  }

  // Notifying while holding the lock costs a little and keeps race checkers (helgrind) exact.
  ~ThreadPool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
      wake_.notify_all();
    }
    for (std::thread& worker : workers_) worker.join();
  }

  int num_threads() const { return num_threads_; }

  void submit(std::function<void()> task) {
    std::lock_guard<std::mutex> lock(mutex_);
    tasks_.push_back(std::move(task));
    queued_.fetch_add(1, std::memory_order_release);
    wake_.notify_one();
  }

 private:
  void worker_loop() {
    inside_parallel_region = true;  // anything a worker runs is already inside a chunk
    for (;;) {
      // Poll the queue's size without the lock first; the task itself is taken under it.
      spin_until([this] { return queued_.load(std::memory_order_acquire) > 0; });
      std::function<void()> task;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
        if (stopping_ && tasks_.empty()) return;
        task = std::move(tasks_.front());
        tasks_.pop_front();
        queued_.fetch_sub(1, std::memory_order_relaxed);
      }
      task();
    }
  }

  int num_threads_;
  std::vector<std::thread> workers_;
  std::deque<std::function<void()>> tasks_;
  std::atomic<std::int64_t> queued_{0};  // tasks_.size(), readable without the lock
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
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

// What the caller waits on: how many chunks are still running, and the first error. It
// lives on the caller's stack: the caller does not return before every chunk has called
// finish(), and a chunk touches nothing of it after finish() lets go of the lock.
// `remaining` is atomic only so that the caller can poll it without the lock; it is changed
// under the lock, and the caller always takes the lock before it returns.
struct ChunkCounter {
  std::mutex mutex;
  std::condition_variable done;
  std::atomic<std::int64_t> remaining{0};
  std::exception_ptr error;

  void finish(std::exception_ptr chunk_error) {
    std::lock_guard<std::mutex> lock(mutex);
    if (chunk_error && !error) error = std::move(chunk_error);  // moved: nothing left to release later
    if (remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) done.notify_all();
  }
};

// Runs one chunk and reports to the counter, turning an exception into a stored error.
void run_chunk(const std::function<void(std::int64_t, std::int64_t)>& body, std::int64_t begin, std::int64_t end,
               ChunkCounter& counter) {
  std::exception_ptr error;
  try {
    body(begin, end);
  } catch (...) {
    error = std::current_exception();
  }
  counter.finish(std::move(error));
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
  std::int64_t num_chunks = std::min<std::int64_t>(threads.num_threads(), (length + grain_size - 1) / grain_size);
  if (num_chunks <= 1) {
    body(begin, end);
    return;
  }
  // Chunk c covers [begin + length*c/n, begin + length*(c+1)/n): sizes differ by at most one.
  auto chunk_start = [&](std::int64_t chunk) { return begin + length * chunk / num_chunks; };

  ChunkCounter counter;
  counter.remaining.store(num_chunks, std::memory_order_relaxed);
  for (std::int64_t chunk = 1; chunk < num_chunks; ++chunk) {
    std::int64_t chunk_begin = chunk_start(chunk), chunk_end = chunk_start(chunk + 1);
    threads.submit([&body, &counter, chunk_begin, chunk_end] { run_chunk(body, chunk_begin, chunk_end, counter); });
  }
  // The caller does chunk 0 itself, marked as inside a region so its nested calls run inline.
  inside_parallel_region = true;
  run_chunk(body, begin, chunk_start(1), counter);
  inside_parallel_region = false;

  spin_until([&] { return counter.remaining.load(std::memory_order_acquire) == 0; });
  // Taken even when the polling saw 0: the last chunk may still hold the lock inside finish().
  std::unique_lock<std::mutex> lock(counter.mutex);
  counter.done.wait(lock, [&] { return counter.remaining.load(std::memory_order_relaxed) == 0; });
  if (counter.error) std::rethrow_exception(counter.error);
}

int get_num_threads() { return pool().num_threads(); }

void set_num_threads(int threads) {
  std::lock_guard<std::mutex> lock(pool_mutex);
  pool_slot() = std::make_unique<ThreadPool>(std::max(threads, 1));
}

}  // namespace ember
