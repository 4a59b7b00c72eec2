// cuda/emulate/emulator.cpp — the fiber scheduler behind cuda/emulate/emulator.h.
//
// One block at a time: every thread of the block gets a ucontext fiber with its own stack.
// The scheduler resumes each runnable fiber in thread order until it finishes or parks at
// a barrier; when nothing is runnable it releases a barrier that every live participant
// has reached (a warp's, else the block's). If none can be released the kernel would hang
// on a GPU, and we throw instead. Deterministic: the same kernel always runs the same way.
#include <ember/cuda/emulate/emulator.h>

#include <ucontext.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#endif

#include <algorithm>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace ember::emulate {

namespace {

constexpr std::size_t kFiberStackBytes = 256 * 1024;  // generous: ASan builds use more stack
constexpr int kWarpSize = 32;

enum class FiberState { Ready, AtBlockBarrier, AtWarpBarrier, Done };

struct Fiber {
  ucontext_t context{};
  FiberState state = FiberState::Ready;
  dim3 thread_index;
  std::size_t shared_offset = 0;  // next free byte of the block's arena for this thread
};

struct BlockRun {
  ucontext_t scheduler{};
  std::vector<Fiber> fibers;
  std::unique_ptr<char[]> stacks;
  alignas(16) unsigned char shared[kSharedMemoryBytes];
  std::vector<std::uint64_t> warp_slots;  // kWarpSize per warp
  const std::function<void()>* body = nullptr;
  int current = -1;
  std::exception_ptr error;
};

thread_local BlockRun* active_run = nullptr;

// AddressSanitizer must be told about stack switches, or it misreads the fibers' stacks.
// Without ASan these are no-ops.
#if defined(__SANITIZE_ADDRESS__)
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
    (*run.body)();
  } catch (...) {
    if (!run.error) run.error = std::current_exception();
  }
  run.fibers[run.current].state = FiberState::Done;
  to_scheduler(nullptr);  // nullptr: this fiber's stack is finished
  // Returning continues at uc_link: the scheduler.
}

// Parks the current fiber in `state` and switches back to the scheduler.
void park(FiberState state) {
  BlockRun* run = active_run;
  if (run == nullptr) throw std::logic_error("emulator: barrier called outside a kernel launch");
  Fiber& fiber = run->fibers[run->current];
  fiber.state = state;
  void* fake_stack = nullptr;
  to_scheduler(&fake_stack);
  swapcontext(&fiber.context, &run->scheduler);
  arrived_in_fiber(fake_stack);
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

// Releases one barrier every live participant has reached; false when none can be.
bool release_a_barrier(BlockRun& run) {
  const int count = static_cast<int>(run.fibers.size());
  bool released = false;
  for (int warp_start = 0; warp_start < count; warp_start += kWarpSize) {
    int warp_end = std::min(count, warp_start + kWarpSize);
    bool any_waiting = false, all_waiting = true;
    for (int i = warp_start; i < warp_end; ++i) {
      FiberState s = run.fibers[i].state;
      if (s == FiberState::AtWarpBarrier) any_waiting = true;
      else if (s != FiberState::Done) all_waiting = false;
    }
    if (any_waiting && all_waiting) {
      for (int i = warp_start; i < warp_end; ++i)
        if (run.fibers[i].state == FiberState::AtWarpBarrier) run.fibers[i].state = FiberState::Ready;
      released = true;
    }
  }
  if (released) return true;
  bool all_at_block = true;
  for (const Fiber& fiber : run.fibers)
    if (fiber.state != FiberState::Done && fiber.state != FiberState::AtBlockBarrier) all_at_block = false;
  if (!all_at_block) return false;
  for (Fiber& fiber : run.fibers)
    if (fiber.state == FiberState::AtBlockBarrier) fiber.state = FiberState::Ready;
  ++stats().barriers;
  return true;
}

void run_block(BlockRun& run) {
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
    bool any_live = false;
    for (int i = 0; i < count; ++i) {
      if (run.fibers[i].state == FiberState::Ready) resume(run, i);
      if (run.fibers[i].state != FiberState::Done) any_live = true;
    }
    if (!any_live || run.error) break;  // a thread threw: report that, not a deadlock
    bool runnable = false;
    for (const Fiber& fiber : run.fibers) runnable = runnable || fiber.state == FiberState::Ready;
    if (!runnable && !release_a_barrier(run))
      throw std::runtime_error("emulator: deadlock — threads of one block wait at different barriers "
                               "(a __syncthreads or shuffle inside divergent code)");
  }
}

}  // namespace

LaunchStats& stats() {
  static LaunchStats counters;
  return counters;
}

void launch(dim3 grid, dim3 block, const std::function<void()>& body) {
  const std::int64_t threads = static_cast<std::int64_t>(block.x) * block.y * block.z;
  if (threads <= 0 || threads > kMaxThreadsPerBlock)
    throw std::invalid_argument("emulator: invalid block size " + std::to_string(threads) +
                                " (CUDA allows 1..1024 threads per block)");
  if (grid.x == 0 || grid.y == 0 || grid.z == 0 || grid.y > 65535 || grid.z > 65535)
    throw std::invalid_argument("emulator: invalid grid (CUDA: x >= 1, 1 <= y, z <= 65535)");
  if (active_run != nullptr) throw std::logic_error("emulator: launch from inside a kernel");

  auto run = std::make_unique<BlockRun>();
  run->fibers.resize(static_cast<std::size_t>(threads));
  run->stacks.reset(new char[static_cast<std::size_t>(threads) * kFiberStackBytes]);
  run->warp_slots.assign(static_cast<std::size_t>((threads + kWarpSize - 1) / kWarpSize) * kWarpSize, 0);
  run->body = &body;
  for (std::int64_t t = 0; t < threads; ++t) {
    unsigned linear = static_cast<unsigned>(t);
    run->fibers[t].thread_index = dim3(linear % block.x, (linear / block.x) % block.y, linear / (block.x * block.y));
  }

  const dim3 saved_thread = threadIdx, saved_block = blockIdx, saved_dim = blockDim, saved_grid = gridDim;
  blockDim = block;
  gridDim = grid;
  active_run = run.get();
  ++stats().launches;
  try {
    for (unsigned z = 0; z < grid.z && !run->error; ++z)
      for (unsigned y = 0; y < grid.y && !run->error; ++y)
        for (unsigned x = 0; x < grid.x && !run->error; ++x) {
          blockIdx = dim3(x, y, z);
          run_block(*run);
          ++stats().blocks;
          stats().threads += threads;
        }
  } catch (...) {
    active_run = nullptr;
    throw;
  }
  active_run = nullptr;
  threadIdx = saved_thread;
  blockIdx = saved_block;
  blockDim = saved_dim;
  gridDim = saved_grid;
  if (run->error) std::rethrow_exception(run->error);
}

void syncthreads() { park(FiberState::AtBlockBarrier); }

void* shared_bytes(std::size_t bytes, std::size_t alignment) {
  BlockRun* run = active_run;
  if (run == nullptr) throw std::logic_error("emulator: shared memory requested outside a kernel launch");
  Fiber& fiber = run->fibers[run->current];
  std::size_t offset = (fiber.shared_offset + alignment - 1) / alignment * alignment;
  if (offset + bytes > kSharedMemoryBytes)
    throw std::length_error("emulator: kernel asks for more than 48 KiB of static shared memory");
  fiber.shared_offset = offset + bytes;
  return run->shared + offset;
}

std::uint64_t warp_exchange_down(std::uint64_t bits, unsigned delta) {
  BlockRun* run = active_run;
  if (run == nullptr) throw std::logic_error("emulator: shuffle outside a kernel launch");
  const int thread = run->current;
  const int lane = thread % kWarpSize;
  const int warp_start = thread - lane;
  run->warp_slots[thread] = bits;
  park(FiberState::AtWarpBarrier);  // every lane has published
  std::uint64_t result = bits;
  int source = lane + static_cast<int>(delta);
  if (source < kWarpSize && warp_start + source < static_cast<int>(run->fibers.size()))
    result = run->warp_slots[warp_start + source];
  park(FiberState::AtWarpBarrier);  // every lane has read before anyone overwrites
  return result;
}

std::uint32_t warp_ballot(bool predicate, std::uint32_t* participants) {
  BlockRun* run = active_run;
  if (run == nullptr) throw std::logic_error("emulator: warp vote outside a kernel launch");
  const int thread = run->current;
  const int lane = thread % kWarpSize;
  const int warp_start = thread - lane;
  const int warp_end = std::min(static_cast<int>(run->fibers.size()), warp_start + kWarpSize);
  run->warp_slots[thread] = predicate ? 1 : 0;
  park(FiberState::AtWarpBarrier);  // every live lane has voted
  // Lanes that finished before the vote (state Done) take no part, as exited threads on a GPU.
  std::uint32_t ballot = 0, voters = 0;
  for (int i = warp_start; i < warp_end; ++i) {
    if (run->fibers[i].state == FiberState::Done) continue;
    voters |= 1u << (i - warp_start);
    if (run->warp_slots[i] != 0) ballot |= 1u << (i - warp_start);
  }
  park(FiberState::AtWarpBarrier);  // every lane has read before anyone votes again
  if (participants != nullptr) *participants = voters;
  return ballot;
}

}  // namespace ember::emulate
