// cuda/emulate/emulator.h — runs a CUDA-style kernel grid on the CPU (tests only), with the
// checks compute-sanitizer makes on hardware.
//
// The kernels in cuda/kernels/*.cuh compile as plain C++ against this header (see
// device_support.cuh). launch(grid, block, body, name) runs the grid's blocks on several host
// threads at once (so blocks really race each other, as on a GPU); inside a block every CUDA
// thread is a fiber (ucontext) on that host thread, and a scheduler switches between them
// at barriers and shuffles:
//   * threadIdx/blockIdx/blockDim/gridDim are per-fiber (the scheduler sets them on resume),
//   * syncthreads() parks the fiber until every live thread of the block arrives,
//   * shfl_down() / warp_ballot() / warp_mma_m16n8k16() are a barrier among the 32 lanes of a
//     warp plus an exchange,
//   * the order in which fibers (and blocks) run is a Schedule: forward, reverse or seeded
//     random, so a kernel that is only correct in one order fails in another.
// What each check models (the compute-sanitizer tool it stands for):
//   * deadlock (synccheck): a barrier that can never be released — divergent __syncthreads;
//   * partial warp (synccheck): a full-mask (0xffffffff) shuffle or vote while some of the
//     warp's 32 lanes have exited or do not exist (block size not a multiple of 32);
//   * initcheck: shared memory starts as a poison pattern (0xFF bytes: NaN, -1) in every
//     block, and a read of a byte no thread of the block has written is an error;
//   * racecheck: two different threads touching the same shared byte between two
//     __syncthreads, at least one of them writing (write/write, read/write, write/read);
//   * memcheck (shared): an access outside its EMBER_SHARED_ARRAY;
//   * memcheck (misaligned): a 16-byte vector load/store or an atomic at an address not
//     aligned to its size;
//   * atomics are real host atomics (blocks run concurrently), so a non-atomic update of
//     one address from several blocks loses updates here as it does on a GPU.
// Every report names the kernel, the block, the thread and the shared-memory offset.
// It cannot check: timing, coalescing, bank conflicts, global-memory races inside a block,
// races that need preemption in the middle of a thread's run between two barriers, the
// memory model (fences, visibility without atomics). Docs: docs/cuda.md ("The emulator").
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

// CUDA's built-in vector type for launch shapes, in the global namespace as in CUDA.
struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

// CUDA's built-in index variables. Per OS thread; the scheduler rewrites them per fiber.
inline thread_local dim3 threadIdx;
inline thread_local dim3 blockIdx;
inline thread_local dim3 blockDim;
inline thread_local dim3 gridDim;

// CUDA's stream handle type, so launchers have the same signature in both worlds.
using cudaStream_t = void*;

namespace ember::emulate {

constexpr std::size_t kSharedMemoryBytes = 48 * 1024;
constexpr int kMaxThreadsPerBlock = 1024;
constexpr unsigned char kSharedPoison = 0xFF;  // float/double NaN, integer -1

// Runs `body` (which calls the kernel) for every thread of every block of the grid.
// `kernel` and `launched_from` only name the launch in error reports.
void launch(dim3 grid, dim3 block, const std::function<void()>& body, const char* kernel = "kernel",
            const char* launched_from = nullptr);

// --- schedules ----------------------------------------------------------------------------
// The order in which a block's ready threads run after every barrier or shuffle, and the
// order in which blocks are handed to the host threads. Random draws a fresh permutation
// at every scheduling round from `seed` and the block index (reproducible).
enum class Order { Forward, Reverse, Random };
struct Schedule {
  Order order = Order::Forward;
  std::uint64_t seed = 0;
  int host_threads = 4;  // blocks in flight at once (1 = one block after another)
};
// The schedule launches use now. Starts from the environment: EMBER_EMULATOR_SCHEDULE =
// forward | reverse | random[:seed], EMBER_EMULATOR_THREADS = host threads.
Schedule schedule();
void set_schedule(const Schedule& schedule);
// "forward", "reverse", "random:7"; parse_schedule throws std::invalid_argument on others.
std::string describe(const Schedule& schedule);
Schedule parse_schedule(const std::string& text);
// The schedules every kernel test runs under: forward, reverse, random — or only the one
// EMBER_EMULATOR_SCHEDULE names, to reproduce a failure.
std::vector<Schedule> test_schedules();

// Sets the schedule for a scope (a test), restoring the previous one after.
class ScopedSchedule {
 public:
  explicit ScopedSchedule(const Schedule& next) : saved_(schedule()) { set_schedule(next); }
  ~ScopedSchedule() { set_schedule(saved_); }
  ScopedSchedule(const ScopedSchedule&) = delete;
  ScopedSchedule& operator=(const ScopedSchedule&) = delete;

 private:
  Schedule saved_;
};

// --- barriers and warps -------------------------------------------------------------------
// __syncthreads(): waits for every live thread of the block.
void syncthreads();

// The warp exchange behind shfl_down: publishes this lane's 8 bytes, returns lane
// (lane + delta)'s (or its own when that lane is past 31). All 32 lanes must take part.
std::uint64_t warp_exchange_down(std::uint64_t bits, unsigned delta);

template <class T>
T shfl_down(T value, unsigned delta) {
  static_assert(sizeof(T) <= 8, "shfl_down: at most 8 bytes");
  std::uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  std::uint64_t received = warp_exchange_down(bits, delta);
  T result;
  std::memcpy(&result, &received, sizeof(T));
  return result;
}

// The warp vote behind __ballot_sync(0xffffffff, p): bit l of the result is lane l's
// predicate. All 32 lanes must take part. `participants` receives the mask of the lanes
// that voted (always all 32 when no error is thrown; kept for __all_sync).
std::uint32_t warp_ballot(bool predicate, std::uint32_t* participants = nullptr);

// The warp matrix multiply-accumulate behind PTX's
//   mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16}.{bf16,f16}.f32  d, a, b, c
// D (16x8, float) = A (16x16) · B (16x8) + C (16x8, float), computed by the 32 lanes together,
// each holding a fragment in PTX's layout (cuda/kernels/mma.cuh draws it): `a` 4 registers
// of two 16-bit values (the lower index in the low half), `b` 2 registers, `c` and `d` 4
// floats. The 16-bit values are bfloat16 or, when `float16`, float16 bits. Products are
// exact in float; each d is c plus the 16 products added in k order in float (a tensor
// core's order of additions is its own, so kernels are tested with float tolerance). All
// 32 lanes must take part, as in warp_ballot.
void warp_mma_m16n8k16(const std::uint32_t (&a)[4], const std::uint32_t (&b)[2], const float (&c)[4], float (&d)[4],
                       bool float16);

// --- memory checks ------------------------------------------------------------------------
// Carves `bytes` from the current block's shared arena. Every thread of a block makes the
// same calls in the same order, so they all get the same addresses. Kernels reach it
// through SharedPtr (shared_memory.h), which checks every access.
void* shared_bytes(std::size_t bytes, std::size_t alignment);
// Records one access of `bytes` at `address` inside the shared arena by the current thread
// and throws on an initcheck or racecheck violation (see the list at the top).
void shared_access(const void* address, std::size_t bytes, bool write);
// Throws a "misaligned address" report when `address` is not a multiple of `alignment`.
void check_alignment(const void* address, std::size_t alignment, const char* what);
// Throws the report for an access outside an EMBER_SHARED_ARRAY of `count` elements.
[[noreturn]] void shared_out_of_bounds(std::ptrdiff_t index, std::ptrdiff_t count, std::size_t element_bytes);

// Counters the tests read to prove the emulator really ran barriers and blocks.
struct LaunchStats {
  std::int64_t launches = 0;
  std::int64_t blocks = 0;
  std::int64_t threads = 0;
  std::int64_t barriers = 0;   // block-wide barrier releases
};
LaunchStats& stats();

}  // namespace ember::emulate

#include <ember/cuda/emulate/shared_memory.h>
