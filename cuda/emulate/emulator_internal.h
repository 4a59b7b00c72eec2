// cuda/emulate/emulator_internal.h — the emulator's state, shared by its .cpp files only.
//
// Launch: one kernel launch (the body, the shape, the schedule, the first error).
// BlockRun: what one host thread needs to run one block at a time — the fibers, their
// stacks, the shared arena and its shadow (who wrote / read each byte, for the checks).
#pragma once

#include <ember/core/address_sanitizer.h>
#include <ember/cuda/emulate/emulator.h>

#include <ucontext.h>

#if EMBER_ADDRESS_SANITIZER
#include <sanitizer/common_interface_defs.h>
#endif

#include <atomic>
#include <exception>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

namespace ember::emulate::internal {

constexpr std::size_t kFiberStackBytes = 256 * 1024;  // generous: ASan builds use more stack
constexpr int kWarpSize = 32;
constexpr int kMmaWordsPerLane = 10;  // 4 A registers, 2 B registers, 4 C floats

enum class FiberState { Ready, AtBlockBarrier, AtWarpBarrier, Done };

struct Fiber {
  ucontext_t context{};
  FiberState state = FiberState::Ready;
  dim3 thread_index;
  std::size_t shared_offset = 0;  // next free byte of the block's arena for this thread
};

struct Launch {
  dim3 grid, block;
  const std::function<void()>* body = nullptr;
  std::string kernel, launched_from;
  Schedule schedule;
  std::uint64_t block_count = 0;
  std::vector<std::uint64_t> random_blocks;  // Order::Random: ticket -> block
  std::atomic<std::uint64_t> next_block{0};
  std::atomic<bool> failed{false};
  std::mutex failure_mutex;
  std::exception_ptr first_error;

  std::uint64_t block_at(std::uint64_t ticket) const;  // the schedule's block order
  void record_failure(std::exception_ptr error);
};

// What the checks know about one byte of shared memory.
//   written_in: the block generation that last wrote it (initcheck: != current = unwritten);
//   epoch: the barrier interval the writer/readers below belong to (older = no access yet);
//   writer, reader, other_reader: linear thread ids (-1 none); two distinct readers are
//   enough to name a reader other than any given writer.
struct ByteShadow {
  std::uint32_t written_in = 0;
  std::uint32_t epoch = 0;
  std::int32_t writer = -1;
  std::int32_t reader = -1;
  std::int32_t other_reader = -1;
};

struct BlockRun {
  Launch* launch = nullptr;
  ucontext_t scheduler{};
  std::vector<Fiber> fibers;
  std::unique_ptr<char[]> stacks;
  int stack_threads = 0;  // fibers the stacks have room for
  std::vector<int> order;  // this round's resume order
  std::mt19937_64 rng;
  alignas(16) unsigned char shared[kSharedMemoryBytes];
  std::vector<ByteShadow> shadow = std::vector<ByteShadow>(kSharedMemoryBytes);
  std::size_t shared_prepared = 0;  // arena bytes carved by some launch so far (poisoned per block)
  std::uint32_t generation = 0;     // one per block run: initcheck's "written in this block"
  std::uint32_t epoch = 0;          // one per barrier interval: racecheck's window
  std::vector<std::uint64_t> warp_slots;  // kWarpSize per warp
  // warp_mma's exchange: each lane's A, B and C fragments (kMmaWordsPerLane words).
  std::vector<std::uint32_t> warp_fragments;
  dim3 block_index;
  int current = -1;
  std::exception_ptr error;
  std::int64_t blocks = 0, barriers = 0;  // this launch's, added to stats() after
};

extern thread_local BlockRun* active_run;

// "kernel 'k' (launched from f), block (x,y,z)" for the reports.
std::string where(const BlockRun& run);
std::string name_thread(const dim3& index);

void park(FiberState state);
void prepare_block_run(BlockRun& run, Launch& launch, int threads);
// A new block: its shared memory becomes poison and unwritten, a new barrier interval starts.
void start_block_shared_memory(BlockRun& run);

}  // namespace ember::emulate::internal
