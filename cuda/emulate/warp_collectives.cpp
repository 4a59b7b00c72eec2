// cuda/emulate/warp_collectives.cpp — warp shuffles, votes and the tensor-core mma for the
// emulator.
//
// A collective is two warp barriers: every lane publishes its value in the warp's slots and
// parks; when all 32 lanes have arrived the scheduler releases them (emulator.cpp checks
// that none has exited); each lane reads what it needs and parks again, so nobody
// overwrites a slot before every lane has read it. The kernels always pass the full mask
// 0xffffffff, so a warp with fewer than 32 lanes (a block size that is not a multiple of
// 32) is reported at once — on a GPU the missing lanes' values are undefined.
#include "emulator_internal.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include <ember/core/reduced_float.h>

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

namespace {

// The two 16-bit values of a fragment register, as floats: `high` picks the upper half (the
// higher index).
float half_of(std::uint32_t word, bool high, bool float16) {
  const auto bits = static_cast<std::uint16_t>(high ? word >> 16 : word & 0xFFFFu);
  return float16 ? reduced_float::float_from_float16_bits(bits) : reduced_float::float_from_bfloat16_bits(bits);
}

}  // namespace

// PTX's fragment layout for m16n8k16 (16-bit A and B, float C and D). Lane l has
// group g = l / 4 and t = l % 4:
//   A  a[0] = (A[g][2t],   A[g][2t+1])     a[1] = (A[g+8][2t],   A[g+8][2t+1])
//      a[2] = (A[g][2t+8], A[g][2t+9])     a[3] = (A[g+8][2t+8], A[g+8][2t+9])
//   B  b[0] = (B[2t][g],   B[2t+1][g])     b[1] = (B[2t+8][g],   B[2t+9][g])
//   C  c[0] = C[g][2t]  c[1] = C[g][2t+1]  c[2] = C[g+8][2t]  c[3] = C[g+8][2t+1]  (D alike)
void warp_mma_m16n8k16(const std::uint32_t (&a)[4], const std::uint32_t (&b)[2], const float (&c)[4], float (&d)[4],
                       bool float16) {
  BlockRun& run = current_run("mma");
  const int warp_start = warp_start_of_current(run, "mma");
  std::uint32_t* mine = &run.warp_fragments[static_cast<std::size_t>(run.current) * kMmaWordsPerLane];
  std::copy(a, a + 4, mine);
  std::copy(b, b + 2, mine + 4);
  std::memcpy(mine + 6, c, sizeof c);
  park(FiberState::AtWarpBarrier);  // every lane has published its fragments

  // The whole of A, B and C from the 32 lanes' fragments.
  float A[16][16], B[16][8], C[16][8];
  for (int lane = 0; lane < kWarpSize; ++lane) {
    const std::uint32_t* words = &run.warp_fragments[static_cast<std::size_t>(warp_start + lane) * kMmaWordsPerLane];
    const int g = lane / 4, t = lane % 4;
    for (int r = 0; r < 4; ++r) {
      const int row = g + (r % 2) * 8, col = 2 * t + (r / 2) * 8;
      A[row][col] = half_of(words[r], false, float16);
      A[row][col + 1] = half_of(words[r], true, float16);
    }
    for (int r = 0; r < 2; ++r) {
      B[2 * t + r * 8][g] = half_of(words[4 + r], false, float16);
      B[2 * t + r * 8 + 1][g] = half_of(words[4 + r], true, float16);
    }
    float lane_c[4];
    std::memcpy(lane_c, words + 6, sizeof lane_c);
    for (int i = 0; i < 4; ++i) C[g + (i / 2) * 8][2 * t + i % 2] = lane_c[i];
  }
  // This lane's D fragment.
  const int lane = run.current - warp_start, g = lane / 4, t = lane % 4;
  for (int i = 0; i < 4; ++i) {
    const int row = g + (i / 2) * 8, col = 2 * t + i % 2;
    float sum = C[row][col];
    for (int k = 0; k < 16; ++k) sum += A[row][k] * B[k][col];
    d[i] = sum;
  }
  park(FiberState::AtWarpBarrier);  // every lane has read before anyone publishes again
}

}  // namespace ember::emulate
