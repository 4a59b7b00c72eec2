// tests/cuda/test_emulator.cpp — the CPU emulator of CUDA grids (cuda/emulate/) itself.
//
// Before trusting kernel results from the emulator, check it implements the CUDA rules the
// kernels rely on: per-thread indices, per-block shared memory, __syncthreads as a real
// barrier, warp shuffles and votes within groups of 32, atomics, and loud failures for launches or
// barriers that would be errors or hangs on a GPU. The checks that model compute-sanitizer
// (initcheck, racecheck, memcheck, synccheck) and the schedules: test_emulator_checks.cpp.
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "cuda_test_support.h"

#include <ember/cuda/kernels/block_reduce.cuh>
#include <ember/cuda/kernels/device_support.cuh>

namespace {

using namespace ember::cuda::kernels;

// Each block reverses its slice through shared memory: correct only if every thread's
// write lands before any thread reads (the barrier) and all threads see one arena.
EMBER_GLOBAL void reverse_in_blocks(const int* in, int* out, int n) {
  EMBER_SHARED_ARRAY(int, tile, 64);
  const int base = static_cast<int>(blockIdx.x * blockDim.x);
  const int t = static_cast<int>(threadIdx.x);
  if (base + t < n) tile[t] = in[base + t];
  EMBER_SYNCTHREADS();
  const int mirrored = static_cast<int>(blockDim.x) - 1 - t;
  if (base + t < n && base + mirrored < n) out[base + t] = tile[mirrored];
}

EMBER_GLOBAL void warp_sum(const int* in, int* out) {
  int value = in[blockIdx.x * blockDim.x + threadIdx.x];
  for (unsigned delta = 16; delta > 0; delta /= 2) value += warp_shfl_down(value, delta);
  if (threadIdx.x % 32 == 0) out[(blockIdx.x * blockDim.x + threadIdx.x) / 32] = value;
}

// Per warp: the ballot of "lane value is odd", and any/all of "value < limit". Lanes past
// `live` return at once — then the full-mask vote of their warp is undefined on a GPU and
// the emulator reports it (test_emulator_checks.cpp).
EMBER_GLOBAL void warp_votes(const int* in, int live, int limit, unsigned* ballots, int* any, int* all) {
  const int t = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (static_cast<int>(threadIdx.x) >= live) return;
  const unsigned ballot = warp_ballot(in[t] % 2 != 0);
  const bool some = warp_any(in[t] < limit);
  const bool every = warp_all(in[t] < limit);
  if (threadIdx.x % 32 == 0) {
    const int w = t / 32;
    ballots[w] = ballot;
    any[w] = some ? 1 : 0;
    all[w] = every ? 1 : 0;
  }
}

EMBER_GLOBAL void count_with_atomics(std::int64_t* counter, float* total) {
  atomic_add(counter, std::int64_t{1});
  atomic_add(total, 0.5f);
}

EMBER_GLOBAL void divergent_barrier() {
  if (threadIdx.x < 16) EMBER_SYNCTHREADS();
  else {
    int dummy = warp_shfl_down(1, 1);
    (void)dummy;
  }
}

EMBER_GLOBAL void too_much_shared() {
  EMBER_SHARED_ARRAY(double, big, 7000);  // 56 000 bytes > 48 KiB
  big[0] = 1.0;
}

EMBER_GLOBAL void record_indices(unsigned* out) {
  const unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const unsigned thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const unsigned threads = blockDim.x * blockDim.y * blockDim.z;
  out[block * threads + thread] = block * 1000 + thread;
}

}  // namespace

TEST_CASE("emulator: every thread of every block runs once with its own indices (3-D grid and block)",
          "[cuda][emulator]") {
  const dim3 grid(2, 3, 2), block(4, 2, 3);
  std::vector<unsigned> out(12 * 24, 0);
  auto kernel = &record_indices;
  EMBER_LAUNCH(kernel, grid, block, nullptr, out.data());
  for (unsigned b = 0; b < 12; ++b)
    for (unsigned t = 0; t < 24; ++t) REQUIRE(out[b * 24 + t] == b * 1000 + t);
}

TEST_CASE("emulator: shared memory is per block and __syncthreads is a barrier", "[cuda][emulator]") {
  for (int n : {1, 7, 31, 33, 100}) {
    std::vector<int> in(n), out(n, -1);
    for (int i = 0; i < n; ++i) in[i] = i * 3 + 1;
    const unsigned blocks = static_cast<unsigned>((n + 31) / 32);
    const auto before = ember::emulate::stats().barriers;
    auto kernel = &reverse_in_blocks;
    EMBER_LAUNCH(kernel, dim3(blocks), dim3(32), nullptr, in.data(), out.data(), n);
    REQUIRE(ember::emulate::stats().barriers - before == blocks);
    for (int i = 0; i < n; ++i) {
      const int base = i / 32 * 32, mirrored = base + 31 - i % 32;
      if (mirrored < n) REQUIRE(out[i] == in[mirrored]);
      else REQUIRE(out[i] == -1);
    }
  }
}

TEST_CASE("emulator: warp shuffles exchange values within each group of 32 lanes", "[cuda][emulator]") {
  std::vector<int> in(128), out(4, 0);
  for (int i = 0; i < 128; ++i) in[i] = i;
  auto kernel = &warp_sum;
  EMBER_LAUNCH(kernel, dim3(2), dim3(64), nullptr, in.data(), out.data());
  for (int w = 0; w < 4; ++w) REQUIRE(out[w] == 32 * 32 * w + 31 * 32 / 2);  // Σ of lanes w*32 .. w*32+31
}

TEST_CASE("emulator: warp votes (ballot, any, all) see exactly the lanes of their own warp", "[cuda][emulator]") {
  // 64 threads = 2 warps; value = thread index, so warp 0 holds 0..31 and warp 1 32..63.
  std::vector<int> in(64);
  for (int i = 0; i < 64; ++i) in[i] = i;
  std::vector<unsigned> ballots(2, 0);
  std::vector<int> any(2, -1), all(2, -1);
  auto kernel = &warp_votes;
  EMBER_LAUNCH(kernel, dim3(1), dim3(64), nullptr, in.data(), 64, 32, ballots.data(), any.data(), all.data());
  REQUIRE(ballots[0] == 0xAAAAAAAAu);  // odd lanes
  REQUIRE(ballots[1] == 0xAAAAAAAAu);
  REQUIRE(any == std::vector<int>{1, 0});  // warp 1 has no value below 32
  REQUIRE(all == std::vector<int>{1, 0});
  // limit 31: warp 0 has one lane (31) failing "all", but "any" still holds.
  EMBER_LAUNCH(kernel, dim3(1), dim3(64), nullptr, in.data(), 64, 31, ballots.data(), any.data(), all.data());
  REQUIRE(any == std::vector<int>{1, 0});
  REQUIRE(all == std::vector<int>{0, 0});
  // Only 40 live threads: warp 1 would vote with lanes 0..7 only — an error, not a vote.
  REQUIRE_THROWS_WITH(
      [&] { EMBER_LAUNCH(kernel, dim3(1), dim3(64), nullptr, in.data(), 40, 40, ballots.data(), any.data(), all.data()); }(),
      Catch::Contains("partial-warp") && Catch::Contains("warp 1: lanes 8-31 exited"));
}

TEST_CASE("emulator: atomicAdd from every thread of a grid counts each exactly once", "[cuda][emulator]") {
  std::int64_t counter = 0;
  float total = 0.0f;
  auto kernel = &count_with_atomics;
  EMBER_LAUNCH(kernel, dim3(5), dim3(96), nullptr, &counter, &total);
  REQUIRE(counter == 480);
  REQUIRE(total == 240.0f);
}

TEST_CASE("emulator: a barrier that could never release is an error, not a hang", "[cuda][emulator]") {
  auto kernel = &divergent_barrier;
  REQUIRE_THROWS_WITH([&] { EMBER_LAUNCH(kernel, dim3(1), dim3(32), nullptr); }(),
                      Catch::Contains("deadlock"));
}

TEST_CASE("emulator: launches CUDA would reject are rejected", "[cuda][emulator]") {
  auto kernel = &too_much_shared;
  REQUIRE_THROWS_WITH([&] { EMBER_LAUNCH(kernel, dim3(1), dim3(1), nullptr); }(), Catch::Contains("48 KiB"));
  auto record = &record_indices;
  unsigned sink[1];
  REQUIRE_THROWS_WITH([&] { EMBER_LAUNCH(record, dim3(1), dim3(1025), nullptr, sink); }(),
                      Catch::Contains("1..1024 threads"));
  REQUIRE_THROWS_AS([&] { EMBER_LAUNCH(record, dim3(0), dim3(1), nullptr, sink); }(), std::invalid_argument);
}

TEST_CASE("emulator: block_reduce gives every thread the block's total for any block size", "[cuda][emulator]") {
  // A Partial for block_reduce: an integer sum that knows how to shuffle itself.
  struct IntSum {
    std::int64_t value;
    IntSum shuffle_down(unsigned delta) const { return IntSum{warp_shfl_down(value, delta)}; }
  };
  for (int threads : {32, 64, 96, 256}) {
    std::vector<std::int64_t> seen(threads, 0);
    std::int64_t* out = seen.data();
    ember::emulate::launch(dim3(1), dim3(threads), [&] {
      EMBER_SHARED_ARRAY(IntSum, scratch, kMaxBlockReduceWarps + 1);
      auto combine = [](IntSum a, IntSum b) { return IntSum{a.value + b.value}; };
      IntSum mine{static_cast<std::int64_t>(threadIdx.x) + 1};
      out[threadIdx.x] = block_reduce(mine, combine, IntSum{0}, scratch).value;
    });
    for (int t = 0; t < threads; ++t) REQUIRE(seen[t] == static_cast<std::int64_t>(threads) * (threads + 1) / 2);
  }
}
