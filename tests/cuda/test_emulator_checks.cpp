// tests/cuda/test_emulator_checks.cpp — each emulator check fires on a deliberately broken kernel.
//
// The emulator stands in for compute-sanitizer while no GPU is at hand (cuda/emulate/
// emulator.h lists what each check models). A check is only worth something if it fires,
// so every one has a broken kernel here and the exact report it must produce: initcheck
// (poisoned, unwritten shared memory), racecheck (conflicting shared accesses between
// barriers), memcheck (shared bounds, misaligned vector loads and atomics), synccheck
// (partial-warp shuffles and votes); plus the schedules (forward, reverse, seeded random),
// blocks on several host threads, and atomics that stay atomic there.
#include <chrono>
#include <cstdint>
#include <cstring>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "cuda_test_support.h"

#include <ember/cuda/kernels/block_reduce.cuh>
#include <ember/cuda/kernels/device_support.cuh>
#include <ember/cuda/kernels/elementwise.cuh>

namespace {

using namespace ember::cuda::kernels;
using ember::emulate::Order;
using ember::emulate::Schedule;
using ember::emulate::ScopedSchedule;

// --- broken kernels -------------------------------------------------------------------------

// Block 2's last thread reads tile[32], which no thread wrote (initcheck).
EMBER_GLOBAL void unwritten_neighbour(float* out) {
  EMBER_SHARED_ARRAY(float, tile, 33);
  const int t = static_cast<int>(threadIdx.x);
  tile[t] = 1.0f;
  EMBER_SYNCTHREADS();
  const int source = blockIdx.x == 2 ? t + 1 : t;
  out[blockIdx.x * blockDim.x + t] = tile[source];
}

// Every thread rewrites its slot and reads its neighbour's with no barrier between
// (racecheck: which value the neighbour's read sees depends on timing).
EMBER_GLOBAL void racy_neighbour(int* out) {
  EMBER_SHARED_ARRAY(int, tile, 32);
  const int t = static_cast<int>(threadIdx.x);
  tile[t] = t;
  EMBER_SYNCTHREADS();
  tile[t] = 2 * t;
  out[t] = tile[(t + 1) % 32];
}

// block_reduce (block_reduce.cuh) with its first __syncthreads removed: warp 0 reads the
// other warps' partials while they may still be writing them.
struct IntSum {
  std::int64_t value;
  IntSum shuffle_down(unsigned delta) const { return IntSum{warp_shfl_down(value, delta)}; }
};

EMBER_GLOBAL void block_sum_missing_barrier(std::int64_t* out) {
  EMBER_SHARED_ARRAY(IntSum, scratch, kMaxBlockReduceWarps + 1);
  auto combine = [](IntSum a, IntSum b) { return IntSum{a.value + b.value}; };
  const unsigned lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize;
  IntSum value = warp_reduce(IntSum{1}, combine);
  if (lane == 0) scratch[warp] = value;
  // EMBER_SYNCTHREADS() belongs here.
  if (warp == 0) {
    IntSum folded = lane < blockDim.x / kWarpSize ? static_cast<IntSum>(scratch[lane]) : IntSum{0};
    folded = warp_reduce(folded, combine);
    if (lane == 0) out[blockIdx.x] = folded.value;
  }
}

// Every thread writes the same flag (racecheck: write/write).
EMBER_GLOBAL void everyone_writes_one_flag(int* out) {
  EMBER_SHARED_ARRAY(int, flag, 1);
  flag[0] = static_cast<int>(threadIdx.x);
  EMBER_SYNCTHREADS();
  out[threadIdx.x] = flag[0];
}

// The last thread writes one element past the array (memcheck on shared memory).
EMBER_GLOBAL void off_by_one_shared(int* out) {
  EMBER_SHARED_ARRAY(int, tile, 64);
  tile[threadIdx.x + 1] = 1;
  EMBER_SYNCTHREADS();
  out[threadIdx.x] = tile[threadIdx.x];
}

// A warp sum in a block of 48 threads: warp 1 has 16 lanes (synccheck: partial warp).
EMBER_GLOBAL void warp_sum_in_partial_warp(const int* in, int* out) {
  int value = in[threadIdx.x];
  for (unsigned delta = 16; delta > 0; delta /= 2) value += warp_shfl_down(value, delta);
  if (threadIdx.x % 32 == 0) out[threadIdx.x / 32] = value;
}

// A 16-byte vector load from a float pointer one element past a 16-byte boundary.
EMBER_GLOBAL void misaligned_vector_load(const float* data, float* out) {
  const Vector<float, 4> v = load_aligned(reinterpret_cast<const Vector<float, 4>*>(data + 1));
  out[0] = v.lane[0];
}

EMBER_GLOBAL void misaligned_atomic(unsigned char* bytes) {
  atomic_add(reinterpret_cast<std::int32_t*>(bytes + 2), std::int32_t{1});
}

// Thread 0 of each block adds one to a counter with a plain read, a pause, then a write —
// the lost-update pattern an atomic prevents. The pause lets concurrent blocks overlap.
EMBER_GLOBAL void non_atomic_count(std::int64_t* counter) {
  if (threadIdx.x != 0) return;
  std::atomic_ref<std::int64_t> cell(*counter);  // each access is atomic, the update is not
  const std::int64_t seen = cell.load(std::memory_order_relaxed);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  cell.store(seen + 1, std::memory_order_relaxed);
}

EMBER_GLOBAL void atomic_count(std::int64_t* counter) {
  if (threadIdx.x != 0) return;
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  atomic_add(counter, std::int64_t{1});
}

EMBER_GLOBAL void count_everything(std::int64_t* counter, float* total, std::uint8_t* wrapping) {
  atomic_add(counter, std::int64_t{1});
  atomic_add(total, 0.5f);
  atomic_add(wrapping, std::uint8_t{1});
}

// 16-byte shared stores and loads: each thread stores 4 copies of its index at element
// 4t + shift and reads back the vector at element `read_at(t)`. shift 1 is misaligned;
// reading element 128 reads the 4 spare floats no thread stored.
EMBER_GLOBAL void shared_vectors(float* out, int shift, int read_spare) {
  EMBER_SHARED_ARRAY(float, tile, 4 * 32 + 4);
  const int t = static_cast<int>(threadIdx.x);
  const float mine = static_cast<float>(t);
  shared_store_vector(tile, 4 * t + shift, Vector<float, 4>{{mine, mine, mine, mine}});
  EMBER_SYNCTHREADS();
  const int read_at = read_spare != 0 && t == 5 ? 128 : 4 * ((t + 1) % 32);
  out[t] = shared_load_vector<Vector<float, 4>>(tile, read_at).lane[3];
}

// --- correct kernels that expose the schedule -----------------------------------------------

// After a barrier each thread appends its index: the log is the order threads ran in.
EMBER_GLOBAL void log_thread_order(int* log, int* next) {
  EMBER_SYNCTHREADS();
  log[(*next)++] = static_cast<int>(threadIdx.x);
}

EMBER_GLOBAL void log_block_order(int* log, int* next) {
  if (threadIdx.x == 0) log[(*next)++] = static_cast<int>(blockIdx.x);
}

EMBER_GLOBAL void note_host_thread(std::thread::id* ids) {
  if (threadIdx.x != 0) return;
  ids[blockIdx.x] = std::this_thread::get_id();
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

Schedule one_thread(Order order, std::uint64_t seed = 0) { return Schedule{order, seed, 1}; }

std::vector<int> thread_order(const Schedule& schedule) {
  const ScopedSchedule scoped(schedule);
  std::vector<int> log(64, -1);
  int next = 0;
  EMBER_LAUNCH(log_thread_order, dim3(1), dim3(64), nullptr, log.data(), &next);
  return log;
}

std::vector<int> ascending(int n) {
  std::vector<int> values(n);
  for (int i = 0; i < n; ++i) values[i] = i;
  return values;
}

}  // namespace

TEST_CASE("emulator checks: shared memory starts as poison in every block, not zero", "[cuda][emulator][checks]") {
  const ScopedSchedule scoped(one_thread(Order::Forward));  // both blocks on one arena
  std::vector<std::vector<unsigned char>> seen(2);
  ember::emulate::launch(dim3(2), dim3(1), [&] {
    auto* raw = static_cast<unsigned char*>(ember::emulate::shared_bytes(64, 16));
    seen[blockIdx.x].assign(raw, raw + 64);
    std::memset(raw, 0, 64);  // block 1 must not see block 0's zeros
  });
  for (const auto& bytes : seen) REQUIRE(bytes == std::vector<unsigned char>(64, ember::emulate::kSharedPoison));
}

TEST_CASE("emulator checks: initcheck reports a read of shared memory no thread wrote", "[cuda][emulator][checks]") {
  for (const Schedule& schedule : ember::emulate::test_schedules()) {
    const ScopedSchedule scoped(schedule);
    std::vector<float> out(4 * 32);
    REQUIRE_THROWS_WITH([&] { EMBER_LAUNCH(unwritten_neighbour, dim3(4), dim3(32), nullptr, out.data()); }(),
                        Catch::StartsWith("emulator initcheck: uninitialised shared memory read in kernel "
                                          "'unwritten_neighbour' (launched from ") &&
                            Catch::Contains("block (2,0,0): thread (31,0,0) reads 4 bytes at shared offset 128 "
                                            "(byte 128 was never written by any thread of this block"));
  }
}

TEST_CASE("emulator checks: racecheck reports a read and a write of one shared word between barriers",
          "[cuda][emulator][checks]") {
  std::vector<int> out(32);
  auto run = [&](const Schedule& schedule) {
    const ScopedSchedule scoped(schedule);
    EMBER_LAUNCH(racy_neighbour, dim3(1), dim3(32), nullptr, out.data());
  };
  // Forward: thread 0 reads tile[1], then thread 1 overwrites it.
  REQUIRE_THROWS_WITH(run(one_thread(Order::Forward)),
                      Catch::StartsWith("emulator racecheck: write-after-read hazard on shared memory in kernel "
                                        "'racy_neighbour'") &&
                          Catch::Contains("block (0,0,0): thread (1,0,0) writes 4 bytes at shared offset 4 that "
                                          "thread (0,0,0) read since the last __syncthreads"));
  // Reverse: thread 31 writes tile[31], then thread 30 reads it. Same bug, other order.
  REQUIRE_THROWS_WITH(run(one_thread(Order::Reverse)),
                      Catch::Contains("read-after-write hazard") &&
                          Catch::Contains("thread (30,0,0) reads 4 bytes at shared offset 124 that thread (31,0,0) wrote"));
  for (const Schedule& schedule : ember::emulate::test_schedules())
    REQUIRE_THROWS_WITH(run(schedule), Catch::Contains("emulator racecheck:") && Catch::Contains("hazard"));
}

TEST_CASE("emulator checks: a block reduction missing its barrier fails under every schedule",
          "[cuda][emulator][checks]") {
  // Forward order reaches warp 0's read before warp 1's write (initcheck); reverse order the
  // other way round (racecheck). Either way the missing barrier is reported.
  std::vector<std::int64_t> out(2);
  for (const Schedule& schedule : ember::emulate::test_schedules()) {
    const ScopedSchedule scoped(schedule);
    REQUIRE_THROWS_WITH(
        [&] { EMBER_LAUNCH(block_sum_missing_barrier, dim3(2), dim3(128), nullptr, out.data()); }(),
        Catch::StartsWith("emulator initcheck:") || Catch::StartsWith("emulator racecheck: read-after-write"));
  }
  const ScopedSchedule reverse(one_thread(Order::Reverse));
  REQUIRE_THROWS_WITH([&] { EMBER_LAUNCH(block_sum_missing_barrier, dim3(1), dim3(128), nullptr, out.data()); }(),
                      Catch::Contains("read-after-write hazard") &&
                          Catch::Contains("thread (3,0,0) reads 8 bytes at shared offset 24 that thread (96,0,0) wrote"));
}

TEST_CASE("emulator checks: racecheck reports two threads writing one shared word", "[cuda][emulator][checks]") {
  const ScopedSchedule scoped(one_thread(Order::Forward));
  std::vector<int> out(32);
  REQUIRE_THROWS_WITH([&] { EMBER_LAUNCH(everyone_writes_one_flag, dim3(1), dim3(32), nullptr, out.data()); }(),
                      Catch::Contains("write-after-write hazard") &&
                          Catch::Contains("thread (1,0,0) writes 4 bytes at shared offset 0 that thread (0,0,0) wrote"));
}

TEST_CASE("emulator checks: memcheck reports a shared access past the array's end", "[cuda][emulator][checks]") {
  std::vector<int> out(64);
  REQUIRE_THROWS_WITH([&] { EMBER_LAUNCH(off_by_one_shared, dim3(1), dim3(64), nullptr, out.data()); }(),
                      Catch::Contains("emulator memcheck: out-of-bounds shared memory access in kernel "
                                      "'off_by_one_shared'") &&
                          Catch::Contains("thread (63,0,0) accesses element 64 of a shared array of 64 elements "
                                          "(4 bytes each)"));
}

TEST_CASE("emulator checks: synccheck reports shuffles and votes in a partial warp", "[cuda][emulator][checks]") {
  std::vector<int> in(48, 1), out(2);
  REQUIRE_THROWS_WITH([&] { EMBER_LAUNCH(warp_sum_in_partial_warp, dim3(1), dim3(48), nullptr, in.data(), out.data()); }(),
                      Catch::StartsWith("emulator synccheck: partial-warp shuffle in kernel 'warp_sum_in_partial_warp'") &&
                          Catch::Contains("is in warp 1, which has only 16 lanes (block of 48 threads); a full-mask "
                                          "(0xffffffff) collective needs all 32"));
  // The same rule guards block_reduce: its callers must launch whole warps.
  REQUIRE_THROWS_WITH(ember::emulate::launch(dim3(1), dim3(40), [&] {
                        EMBER_SHARED_ARRAY(IntSum, scratch, kMaxBlockReduceWarps + 1);
                        auto combine = [](IntSum a, IntSum b) { return IntSum{a.value + b.value}; };
                        block_reduce(IntSum{1}, combine, IntSum{0}, scratch);
                      }),
                      Catch::Contains("which has only 8 lanes"));
}

TEST_CASE("emulator checks: memcheck reports misaligned vector loads and atomics", "[cuda][emulator][checks]") {
  alignas(16) float data[8] = {};
  float out = 0;
  REQUIRE_THROWS_WITH([&] { EMBER_LAUNCH(misaligned_vector_load, dim3(1), dim3(1), nullptr, data, &out); }(),
                      Catch::StartsWith("emulator memcheck: misaligned address in kernel 'misaligned_vector_load'") &&
                          Catch::Contains("thread (0,0,0): a 16-byte vector load at 0x") &&
                          Catch::Contains("is not 16-byte aligned"));
  alignas(16) unsigned char bytes[16] = {};
  REQUIRE_THROWS_WITH([&] { EMBER_LAUNCH(misaligned_atomic, dim3(1), dim3(1), nullptr, bytes); }(),
                      Catch::Contains("a 4-byte atomic_add at 0x") && Catch::Contains("is not 4-byte aligned"));
}

TEST_CASE("emulator checks: 16-byte shared vector accesses are checked like scalar ones", "[cuda][emulator][checks]") {
  std::vector<float> out(32, -1.0f);
  EMBER_LAUNCH(shared_vectors, dim3(1), dim3(32), nullptr, out.data(), 0, 0);
  for (int t = 0; t < 32; ++t) REQUIRE(out[t] == static_cast<float>((t + 1) % 32));
  REQUIRE_THROWS_WITH([&] { EMBER_LAUNCH(shared_vectors, dim3(1), dim3(32), nullptr, out.data(), 1, 0); }(),
                      Catch::Contains("a 16-byte shared vector store at 0x") && Catch::Contains("is not 16-byte aligned"));
  REQUIRE_THROWS_WITH([&] { EMBER_LAUNCH(shared_vectors, dim3(1), dim3(32), nullptr, out.data(), 0, 1); }(),
                      Catch::Contains("emulator initcheck") &&
                          Catch::Contains("thread (5,0,0) reads 16 bytes at shared offset 512"));
}

TEST_CASE("emulator checks: blocks run concurrently on several host threads", "[cuda][emulator][checks]") {
  const ScopedSchedule scoped(Schedule{Order::Forward, 0, 4});
  std::vector<std::thread::id> ids(16);
  EMBER_LAUNCH(note_host_thread, dim3(16), dim3(32), nullptr, ids.data());
  REQUIRE(std::set<std::thread::id>(ids.begin(), ids.end()).size() > 1);
}

TEST_CASE("emulator checks: a non-atomic update from several blocks loses counts; atomic_add does not",
          "[cuda][emulator][checks]") {
  std::int64_t counter = 0;
  {
    const ScopedSchedule serial(one_thread(Order::Forward));  // one block at a time hides the bug
    EMBER_LAUNCH(non_atomic_count, dim3(8), dim3(32), nullptr, &counter);
    REQUIRE(counter == 8);
  }
  const ScopedSchedule parallel(Schedule{Order::Forward, 0, 4});
  counter = 0;
  EMBER_LAUNCH(non_atomic_count, dim3(8), dim3(32), nullptr, &counter);
  REQUIRE(counter < 8);
  counter = 0;
  EMBER_LAUNCH(atomic_count, dim3(8), dim3(32), nullptr, &counter);
  REQUIRE(counter == 8);
  // Many threads, many blocks, three dtypes (uint8 wraps modulo 256 as atomicAdd does).
  for (const Schedule& schedule : ember::emulate::test_schedules()) {
    const ScopedSchedule scoped(schedule);
    std::int64_t count = 0;
    float total = 0.0f;
    std::uint8_t wrapping = 0;
    EMBER_LAUNCH(count_everything, dim3(64), dim3(256), nullptr, &count, &total, &wrapping);
    REQUIRE(count == 64 * 256);
    REQUIRE(total == 8192.0f);
    REQUIRE(wrapping == 0);  // 16384 = 64 × 256
  }
}

TEST_CASE("emulator checks: schedules run threads forward, reversed, or in a seeded random order",
          "[cuda][emulator][checks]") {
  const std::vector<int> forward = ascending(64);
  const std::vector<int> reverse(forward.rbegin(), forward.rend());
  REQUIRE(thread_order(one_thread(Order::Forward)) == forward);
  REQUIRE(thread_order(one_thread(Order::Reverse)) == reverse);
  const std::vector<int> random = thread_order(one_thread(Order::Random, 7));
  REQUIRE(random != forward);
  REQUIRE(random != reverse);
  REQUIRE(std::multiset<int>(random.begin(), random.end()) == std::multiset<int>(forward.begin(), forward.end()));
  REQUIRE(thread_order(one_thread(Order::Random, 7)) == random);  // reproducible from the seed
  REQUIRE(thread_order(one_thread(Order::Random, 8)) != random);

  // Blocks follow the schedule too (one host thread, so the log is the order).
  auto block_order = [](const Schedule& schedule) {
    const ScopedSchedule scoped(schedule);
    std::vector<int> log(6, -1);
    int next = 0;
    EMBER_LAUNCH(log_block_order, dim3(6), dim3(32), nullptr, log.data(), &next);
    return log;
  };
  REQUIRE(block_order(one_thread(Order::Forward)) == ascending(6));
  REQUIRE(block_order(one_thread(Order::Reverse)) == std::vector<int>{5, 4, 3, 2, 1, 0});
  REQUIRE(block_order(one_thread(Order::Random, 7)) != ascending(6));
}

TEST_CASE("emulator checks: schedules are named and parsed as EMBER_EMULATOR_SCHEDULE spells them",
          "[cuda][emulator][checks]") {
  REQUIRE(ember::emulate::parse_schedule("reverse").order == Order::Reverse);
  const Schedule seeded = ember::emulate::parse_schedule("random:42");
  REQUIRE(seeded.order == Order::Random);
  REQUIRE(seeded.seed == 42);
  REQUIRE(ember::emulate::describe(Schedule{Order::Random, 42, 3}) == "random:42 (3 host threads)");
  REQUIRE_THROWS_WITH(ember::emulate::parse_schedule("backwards"),
                      Catch::Contains("bad schedule 'backwards'") && Catch::Contains("EMBER_EMULATOR_SCHEDULE"));
  REQUIRE_THROWS_AS(ember::emulate::set_schedule(Schedule{Order::Forward, 0, 0}), std::invalid_argument);
}
