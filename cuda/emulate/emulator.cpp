// cuda/emulate/emulator.cpp — the fiber scheduler and the checks behind cuda/emulate/emulator.h.
//
// A launch hands its blocks to up to Schedule::host_threads worker threads. Each worker
// owns a BlockRun: one ucontext fiber (with its own stack) per CUDA thread of the block, a
// 48 KiB shared arena and a shadow byte per arena byte. The worker resumes the block's
// runnable fibers in the schedule's order until each finishes or parks at a barrier; when
// nothing is runnable it releases a barrier every live participant has reached (a warp's,
// else the block's). If none can be released the kernel would hang on a GPU: we throw.
// The shared-memory checks live in shared_checks.cpp; this file is the scheduling.
#include "emulator_internal.h"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace ember::emulate {

namespace internal {

thread_local BlockRun* active_run = nullptr;

std::string name_thread(const dim3& index) {
  // Appended piece by piece: GCC 12 warns (-Wrestrict, a false positive) on "(" + to_string(...).
  std::string text = "(";
  text += std::to_string(index.x);
  text += ',';
  text += std::to_string(index.y);
  text += ',';
  text += std::to_string(index.z);
  text += ')';
  return text;
}

std::string where(const BlockRun& run) {
  std::string text = "kernel '" + run.launch->kernel + "'";
  if (!run.launch->launched_from.empty()) text += " (launched from " + run.launch->launched_from + ")";
  return text + ", block " + name_thread(run.block_index);
}

}  // namespace internal

using namespace internal;

namespace {

// AddressSanitizer must be told about stack switches, or it misreads the fibers' stacks.
// Without ASan these are no-ops.
#if EMBER_ADDRESS_SANITIZER
thread_local const void* scheduler_stack_bottom = nullptr;
thread_local std::size_t scheduler_stack_size = 0;
void before_switch(void** fake_stack, const void* bottom, std::size_t size) {
  __sanitizer_start_switch_fiber(fake_stack, bottom, size);
}
void after_switch(void* fake_stack, const void** old_bottom, std::size_t* old_size) {
  __sanitizer_finish_switch_fiber(fake_stack, old_bottom, old_size);
}
void to_scheduler(void** fake_stack) { before_switch(fake_stack, scheduler_stack_bottom, scheduler_stack_size); }
void arrived_in_fiber(void* fake_stack) { after_switch(fake_stack, &scheduler_stack_bottom, &scheduler_stack_size); }
#else
void before_switch(void**, const void*, std::size_t) {}
void after_switch(void*, const void**, std::size_t*) {}
void to_scheduler(void**) {}
void arrived_in_fiber(void*) {}
#endif

void fiber_entry() {
  arrived_in_fiber(nullptr);
  BlockRun& run = *active_run;
  try {
    (*run.launch->body)();
  } catch (...) {
    if (!run.error) run.error = std::current_exception();
  }
  run.fibers[run.current].state = FiberState::Done;
  to_scheduler(nullptr);  // nullptr: this fiber's stack is finished
  // Returning continues at uc_link: the scheduler.
}

void resume(BlockRun& run, int index) {
  Fiber& fiber = run.fibers[index];
  run.current = index;
  threadIdx = fiber.thread_index;
  void* fake_stack = nullptr;
  before_switch(&fake_stack, fiber.context.uc_stack.ss_sp, fiber.context.uc_stack.ss_size);
  swapcontext(&run.scheduler, &fiber.context);
  after_switch(fake_stack, nullptr, nullptr);
}

// "lanes 8-31" for the report of a partial-warp collective.
std::string lane_range(int first, int last) {
  return first == last ? "lane " + std::to_string(first) : "lanes " + std::to_string(first) + "-" + std::to_string(last);
}

// Releases one barrier every live participant has reached; false when none can be.
// A warp collective (shuffle, vote) is released only when all 32 lanes are there: the
// kernels pass the full mask 0xffffffff, and a lane that has exited would make the
// result undefined on a GPU — reported instead of silently voting without it.
bool release_a_barrier(BlockRun& run) {
  const int count = static_cast<int>(run.fibers.size());
  bool released = false;
  for (int warp_start = 0; warp_start < count; warp_start += kWarpSize) {
    const int warp_end = std::min(count, warp_start + kWarpSize);
    bool any_waiting = false, all_waiting = true;
    int first_done = -1, last_done = -1;
    for (int i = warp_start; i < warp_end; ++i) {
      const FiberState s = run.fibers[i].state;
      if (s == FiberState::AtWarpBarrier) any_waiting = true;
      else if (s == FiberState::Done) last_done = i - warp_start, first_done = first_done < 0 ? i - warp_start : first_done;
      else all_waiting = false;
    }
    if (!any_waiting || !all_waiting) continue;
    if (first_done >= 0)
      throw std::runtime_error("emulator synccheck: partial-warp shuffle or vote in " + where(run) + ", warp " +
                               std::to_string(warp_start / kWarpSize) + ": " + lane_range(first_done, last_done) +
                               " exited before a full-mask (0xffffffff) warp collective the other lanes reached "
                               "(undefined on a GPU; every lane of the warp must reach it)");
    for (int i = warp_start; i < warp_end; ++i) run.fibers[i].state = FiberState::Ready;
    released = true;
  }
  if (released) return true;
  for (const Fiber& fiber : run.fibers)
    if (fiber.state != FiberState::Done && fiber.state != FiberState::AtBlockBarrier) return false;
  for (Fiber& fiber : run.fibers)
    if (fiber.state == FiberState::AtBlockBarrier) fiber.state = FiberState::Ready;
  ++run.epoch;  // racecheck: a new interval between barriers begins
  ++run.barriers;
  return true;
}

// The order of this scheduling round: forward, reverse, or a fresh random permutation.
void next_round_order(BlockRun& run) {
  const int count = static_cast<int>(run.fibers.size());
  run.order.resize(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) run.order[i] = run.launch->schedule.order == Order::Reverse ? count - 1 - i : i;
  if (run.launch->schedule.order == Order::Random) std::shuffle(run.order.begin(), run.order.end(), run.rng);
}

void run_block(BlockRun& run, std::uint64_t block_linear) {
  const Launch& launch = *run.launch;
  const unsigned gx = launch.grid.x, gy = launch.grid.y;
  run.block_index = dim3(static_cast<unsigned>(block_linear % gx), static_cast<unsigned>(block_linear / gx % gy),
                         static_cast<unsigned>(block_linear / (static_cast<std::uint64_t>(gx) * gy)));
  blockIdx = run.block_index;
  run.rng.seed(launch.schedule.seed * 0x9E3779B97F4A7C15ull ^ block_linear);
  start_block_shared_memory(run);
  const int count = static_cast<int>(run.fibers.size());
  for (int i = 0; i < count; ++i) {
    Fiber& fiber = run.fibers[i];
    fiber.state = FiberState::Ready;
    fiber.shared_offset = 0;
    getcontext(&fiber.context);
    fiber.context.uc_stack.ss_sp = run.stacks.get() + static_cast<std::size_t>(i) * kFiberStackBytes;
    fiber.context.uc_stack.ss_size = kFiberStackBytes;
    fiber.context.uc_link = &run.scheduler;
    makecontext(&fiber.context, fiber_entry, 0);
  }
  for (;;) {
    next_round_order(run);
    bool any_live = false;
    for (int i : run.order) {
      if (run.fibers[i].state == FiberState::Ready) resume(run, i);
      if (run.fibers[i].state != FiberState::Done) any_live = true;
      if (run.error) return;  // a thread threw: report that, not a deadlock
    }
    if (!any_live) return;
    bool runnable = false;
    for (const Fiber& fiber : run.fibers) runnable = runnable || fiber.state == FiberState::Ready;
    if (!runnable && !release_a_barrier(run))
      throw std::runtime_error("emulator: deadlock in " + where(run) +
                               " — threads of one block wait at different barriers "
                               "(a __syncthreads or shuffle inside divergent code)");
  }
}

// Worker loop: takes the next block of the launch's order until none are left or a block
// failed. Blocks run concurrently on the workers, as on the SMs of a GPU.
void work(Launch& launch, BlockRun& run) {
  blockDim = launch.block;
  gridDim = launch.grid;
  active_run = &run;
  try {
    for (;;) {
      if (launch.failed.load()) break;
      const std::uint64_t ticket = launch.next_block.fetch_add(1);
      if (ticket >= launch.block_count) break;
      run_block(run, launch.block_at(ticket));
      if (run.error) break;
      ++run.blocks;
    }
  } catch (...) {
    if (!run.error) run.error = std::current_exception();
  }
  if (run.error) launch.record_failure(run.error);
  active_run = nullptr;
}

// The pooled BlockRuns (stacks are large; reusing them keeps launches cheap) and the lock
// that makes launches from several test threads take turns.
std::mutex launch_mutex;
std::vector<std::unique_ptr<BlockRun>> pool;

std::mutex schedule_mutex;

Schedule schedule_from_environment() {
  Schedule chosen;
  if (const char* text = std::getenv("EMBER_EMULATOR_SCHEDULE"); text != nullptr && *text != '\0')
    chosen = parse_schedule(text);
  if (const char* text = std::getenv("EMBER_EMULATOR_THREADS"); text != nullptr && *text != '\0')
    chosen.host_threads = std::max(1, std::atoi(text));
  return chosen;
}

Schedule& current_schedule() {
  static Schedule chosen = schedule_from_environment();
  return chosen;
}

}  // namespace

std::uint64_t Launch::block_at(std::uint64_t ticket) const {
  switch (schedule.order) {
    case Order::Forward: return ticket;
    case Order::Reverse: return block_count - 1 - ticket;
    case Order::Random: return random_blocks.empty() ? ticket : random_blocks[ticket];
  }
  return ticket;
}

void Launch::record_failure(std::exception_ptr error) {
  std::lock_guard<std::mutex> lock(failure_mutex);
  if (!first_error) first_error = std::move(error);
  failed.store(true);
}

Schedule schedule() {
  std::lock_guard<std::mutex> lock(schedule_mutex);
  return current_schedule();
}

void set_schedule(const Schedule& next) {
  if (next.host_threads < 1) throw std::invalid_argument("emulator: a schedule needs at least 1 host thread");
  std::lock_guard<std::mutex> lock(schedule_mutex);
  current_schedule() = next;
}

std::string describe(const Schedule& s) {
  std::string text = s.order == Order::Forward ? "forward" : s.order == Order::Reverse ? "reverse" : "random:" + std::to_string(s.seed);
  return text + " (" + std::to_string(s.host_threads) + " host threads)";
}

Schedule parse_schedule(const std::string& text) {
  Schedule parsed;
  if (text == "forward") return parsed;
  if (text == "reverse") { parsed.order = Order::Reverse; return parsed; }
  if (text.rfind("random", 0) == 0) {
    parsed.order = Order::Random;
    parsed.seed = 1;
    if (text.size() > 7 && text[6] == ':') parsed.seed = std::strtoull(text.c_str() + 7, nullptr, 10);
    else if (text.size() != 6) throw std::invalid_argument("emulator: bad schedule '" + text + "'");
    return parsed;
  }
  throw std::invalid_argument("emulator: bad schedule '" + text +
                              "' (EMBER_EMULATOR_SCHEDULE is forward, reverse, random or random:SEED)");
}

std::vector<Schedule> test_schedules() {
  if (const char* text = std::getenv("EMBER_EMULATOR_SCHEDULE"); text != nullptr && *text != '\0')
    return {schedule()};
  const int threads = schedule().host_threads;
  return {Schedule{Order::Forward, 0, threads}, Schedule{Order::Reverse, 0, threads}, Schedule{Order::Random, 1, threads}};
}

LaunchStats& stats() {
  static LaunchStats counters;
  return counters;
}

void launch(dim3 grid, dim3 block, const std::function<void()>& body, const char* kernel, const char* launched_from) {
  const std::int64_t threads = static_cast<std::int64_t>(block.x) * block.y * block.z;
  if (threads <= 0 || threads > kMaxThreadsPerBlock)
    throw std::invalid_argument("emulator: invalid block size " + std::to_string(threads) +
                                " (CUDA allows 1..1024 threads per block)");
  if (grid.x == 0 || grid.y == 0 || grid.z == 0 || grid.y > 65535 || grid.z > 65535)
    throw std::invalid_argument("emulator: invalid grid (CUDA: x >= 1, 1 <= y, z <= 65535)");
  if (active_run != nullptr) throw std::logic_error("emulator: launch from inside a kernel");

  Launch run_info;
  run_info.grid = grid;
  run_info.block = block;
  run_info.body = &body;
  run_info.kernel = kernel != nullptr ? kernel : "kernel";
  run_info.launched_from = launched_from != nullptr ? launched_from : "";
  run_info.schedule = schedule();
  run_info.block_count = static_cast<std::uint64_t>(grid.x) * grid.y * grid.z;
  if (run_info.schedule.order == Order::Random && run_info.block_count <= (1u << 20)) {
    run_info.random_blocks.resize(run_info.block_count);
    for (std::uint64_t b = 0; b < run_info.block_count; ++b) run_info.random_blocks[b] = b;
    std::mt19937_64 rng(run_info.schedule.seed);
    std::shuffle(run_info.random_blocks.begin(), run_info.random_blocks.end(), rng);
  }
  const int workers = static_cast<int>(
      std::min<std::uint64_t>(static_cast<std::uint64_t>(run_info.schedule.host_threads), run_info.block_count));

  std::lock_guard<std::mutex> lock(launch_mutex);
  ++stats().launches;
  if (static_cast<int>(pool.size()) < workers) pool.resize(static_cast<std::size_t>(workers));
  for (int w = 0; w < workers; ++w) {
    if (!pool[w]) pool[w] = std::make_unique<BlockRun>();
    prepare_block_run(*pool[w], run_info, static_cast<int>(threads));
  }
  std::vector<std::thread> threads_running;
  for (int w = 1; w < workers; ++w) threads_running.emplace_back(work, std::ref(run_info), std::ref(*pool[w]));
  // Worker 0 is the launching thread itself; its CUDA variables are restored after.
  const dim3 saved_thread = threadIdx, saved_block = blockIdx, saved_dim = blockDim, saved_grid = gridDim;
  work(run_info, *pool[0]);
  for (std::thread& t : threads_running) t.join();
  threadIdx = saved_thread;
  blockIdx = saved_block;
  blockDim = saved_dim;
  gridDim = saved_grid;

  for (int w = 0; w < workers; ++w) {
    BlockRun& run = *pool[w];
    stats().blocks += run.blocks;
    stats().threads += run.blocks * threads;
    stats().barriers += run.barriers;
    // A failed block leaves fibers parked mid-kernel on its stacks: never reuse those.
    if (run.error) pool[w].reset();
  }
  if (run_info.first_error) std::rethrow_exception(run_info.first_error);
}

void syncthreads() { park(FiberState::AtBlockBarrier); }

// Parks the current fiber in `state` and switches back to the scheduler.
void internal::park(FiberState state) {
  BlockRun* run = active_run;
  if (run == nullptr) throw std::logic_error("emulator: barrier called outside a kernel launch");
  Fiber& fiber = run->fibers[run->current];
  fiber.state = state;
  void* fake_stack = nullptr;
  to_scheduler(&fake_stack);
  swapcontext(&fiber.context, &run->scheduler);
  arrived_in_fiber(fake_stack);
}

void internal::prepare_block_run(BlockRun& run, Launch& launch, int threads) {
  run.launch = &launch;
  run.error = nullptr;
  run.blocks = 0;
  run.barriers = 0;
  run.fibers.assign(static_cast<std::size_t>(threads), Fiber{});
  if (run.stack_threads < threads) {
    run.stacks.reset(new char[static_cast<std::size_t>(threads) * kFiberStackBytes]);
    run.stack_threads = threads;
  }
  run.warp_slots.assign(static_cast<std::size_t>((threads + kWarpSize - 1) / kWarpSize) * kWarpSize, 0);
  run.warp_fragments.assign(run.warp_slots.size() * kMmaWordsPerLane, 0);
  const dim3 block = launch.block;
  for (int t = 0; t < threads; ++t) {
    const unsigned linear = static_cast<unsigned>(t);
    run.fibers[t].thread_index = dim3(linear % block.x, (linear / block.x) % block.y, linear / (block.x * block.y));
  }
}

}  // namespace ember::emulate
