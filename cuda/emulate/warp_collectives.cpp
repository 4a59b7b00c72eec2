// cuda/emulate/warp_collectives.cpp — warp shuffles and votes for the emulator.
//
// A collective is two warp barriers: every lane publishes its value in the warp's slots and
// parks; when all 32 lanes have arrived the scheduler releases them (emulator.cpp checks
// that none has exited); each lane reads what it needs and parks again, so nobody
// overwrites a slot before every lane has read it. The kernels always pass the full mask
// 0xffffffff, so a warp with fewer than 32 lanes (a block size that is not a multiple of
// 32) is reported at once — on a GPU the missing lanes' values are undefined.
#include "emulator_internal.h"

#include <algorithm>
#include <stdexcept>

namespace ember::emulate {

using namespace internal;

namespace {

// The current thread's lane and the first thread of its warp, after checking the warp is whole.
int warp_start_of_current(BlockRun& run, const char* what) {
  const int thread = run.current;
  const int warp_start = thread - thread % kWarpSize;
  const int lanes = std::min(static_cast<int>(run.fibers.size()), warp_start + kWarpSize) - warp_start;
  if (lanes < kWarpSize)
    throw std::runtime_error("emulator synccheck: partial-warp " + std::string(what) + " in " + where(run) + ": thread " +
                             name_thread(run.fibers[thread].thread_index) + " is in warp " +
                             std::to_string(warp_start / kWarpSize) + ", which has only " + std::to_string(lanes) +
                             " lanes (block of " + std::to_string(run.fibers.size()) +
                             " threads); a full-mask (0xffffffff) collective needs all 32");
  return warp_start;
}

BlockRun& current_run(const char* what) {
  BlockRun* run = active_run;
  if (run == nullptr) throw std::logic_error(std::string("emulator: ") + what + " outside a kernel launch");
  return *run;
}

}  // namespace

std::uint64_t warp_exchange_down(std::uint64_t bits, unsigned delta) {
  BlockRun& run = current_run("shuffle");
  const int warp_start = warp_start_of_current(run, "shuffle");
  const int lane = run.current - warp_start;
  run.warp_slots[run.current] = bits;
  park(FiberState::AtWarpBarrier);  // every lane has published
  std::uint64_t result = bits;
  const int source = lane + static_cast<int>(delta);
  if (source < kWarpSize) result = run.warp_slots[warp_start + source];
  park(FiberState::AtWarpBarrier);  // every lane has read before anyone overwrites
  return result;
}

std::uint32_t warp_ballot(bool predicate, std::uint32_t* participants) {
  BlockRun& run = current_run("warp vote");
  const int warp_start = warp_start_of_current(run, "vote");
  run.warp_slots[run.current] = predicate ? 1 : 0;
  park(FiberState::AtWarpBarrier);  // every lane has voted
  std::uint32_t ballot = 0;
  for (int lane = 0; lane < kWarpSize; ++lane)
    if (run.warp_slots[warp_start + lane] != 0) ballot |= 1u << lane;
  park(FiberState::AtWarpBarrier);  // every lane has read before anyone votes again
  if (participants != nullptr) *participants = 0xffffffffu;
  return ballot;
}

}  // namespace ember::emulate
