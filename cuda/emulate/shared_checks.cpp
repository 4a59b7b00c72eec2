// cuda/emulate/shared_checks.cpp — the emulator's memory checks (initcheck, racecheck,
// memcheck), the counterparts of compute-sanitizer's tools.
//
// Shared memory: every block starts with its arena full of the poison byte 0xFF and every
// byte marked unwritten. Each access through a SharedRef (shared_memory.h) lands in
// shared_access(), which keeps one ByteShadow per byte:
//   * initcheck — a read of a byte that no thread of this block has written;
//   * racecheck — within one barrier interval (between two __syncthreads), a write to a
//     byte another thread read or wrote, or a read of a byte another thread wrote. On a GPU
//     those threads run in no defined order, so the result depends on timing. The check
//     looks at which threads touched the byte, not at the order this run happened to use,
//     so it fires under every schedule.
// Warp shuffles do not end an interval (CUDA orders shared memory only at barriers, fences
// and __syncwarp; the kernels use none of the latter two).
#include "emulator_internal.h"

#include <cstdio>
#include <stdexcept>

namespace ember::emulate {

using namespace internal;

namespace {

BlockRun& current_run(const char* what) {
  BlockRun* run = active_run;
  if (run == nullptr) throw std::logic_error(std::string("emulator: ") + what + " outside a kernel launch");
  return *run;
}

std::string thread_name(const BlockRun& run, int thread) {
  return "thread " + name_thread(run.fibers[static_cast<std::size_t>(thread)].thread_index);
}

[[noreturn]] void report_race(const BlockRun& run, const char* hazard, bool write, std::size_t offset,
                              std::size_t bytes, int other, const char* other_did) {
  throw std::runtime_error(std::string("emulator racecheck: ") + hazard + " hazard on shared memory in " + where(run) +
                           ": " + thread_name(run, run.current) + (write ? " writes " : " reads ") +
                           std::to_string(bytes) + " bytes at shared offset " + std::to_string(offset) + " that " +
                           thread_name(run, other) + " " + other_did +
                           " since the last __syncthreads (no barrier orders the two accesses)");
}

}  // namespace

void internal::start_block_shared_memory(BlockRun& run) {
  ++run.generation;  // every byte's written_in is now stale: unwritten
  ++run.epoch;
  std::memset(run.shared, kSharedPoison, run.shared_prepared);
}

void* shared_bytes(std::size_t bytes, std::size_t alignment) {
  BlockRun& run = current_run("shared memory requested");
  Fiber& fiber = run.fibers[run.current];
  const std::size_t offset = (fiber.shared_offset + alignment - 1) / alignment * alignment;
  if (offset + bytes > kSharedMemoryBytes)
    throw std::length_error("emulator: kernel asks for more than 48 KiB of static shared memory");
  fiber.shared_offset = offset + bytes;
  if (fiber.shared_offset > run.shared_prepared) {  // first use of these bytes: poison them too
    std::memset(run.shared + run.shared_prepared, kSharedPoison, fiber.shared_offset - run.shared_prepared);
    run.shared_prepared = fiber.shared_offset;
  }
  return run.shared + offset;
}

void shared_access(const void* address, std::size_t bytes, bool write) {
  BlockRun& run = current_run("shared memory access");
  const auto* byte = static_cast<const unsigned char*>(address);
  if (byte < run.shared || byte + bytes > run.shared + run.shared_prepared)
    throw std::logic_error("emulator: shared access outside the block's arena in " + where(run));
  const std::size_t offset = static_cast<std::size_t>(byte - run.shared);
  const int me = run.current;
  for (std::size_t b = offset; b < offset + bytes; ++b) {
    ByteShadow& s = run.shadow[b];
    if (s.epoch != run.epoch) s = ByteShadow{s.written_in, run.epoch, -1, -1, -1};
    if (write) {
      if (s.writer >= 0 && s.writer != me) report_race(run, "write-after-write", true, offset, bytes, s.writer, "wrote");
      const int reader = s.reader >= 0 && s.reader != me ? s.reader : s.other_reader >= 0 && s.other_reader != me ? s.other_reader : -1;
      if (reader >= 0) report_race(run, "write-after-read", true, offset, bytes, reader, "read");
      s.writer = me;
      s.written_in = run.generation;
    } else {
      if (s.written_in != run.generation)
        throw std::runtime_error("emulator initcheck: uninitialised shared memory read in " + where(run) + ": " +
                                 thread_name(run, me) + " reads " + std::to_string(bytes) +
                                 " bytes at shared offset " + std::to_string(offset) + " (byte " + std::to_string(b) +
                                 " was never written by any thread of this block; on a GPU it holds garbage)");
      if (s.writer >= 0 && s.writer != me) report_race(run, "read-after-write", false, offset, bytes, s.writer, "wrote");
      if (s.reader < 0) s.reader = me;
      else if (s.reader != me && s.other_reader < 0) s.other_reader = me;
    }
  }
}

void shared_out_of_bounds(std::ptrdiff_t index, std::ptrdiff_t count, std::size_t element_bytes) {
  BlockRun& run = current_run("shared memory access");
  throw std::runtime_error("emulator memcheck: out-of-bounds shared memory access in " + where(run) + ": " +
                           thread_name(run, run.current) + " accesses element " + std::to_string(index) +
                           " of a shared array of " + std::to_string(count) + " elements (" +
                           std::to_string(element_bytes) + " bytes each)");
}

void check_alignment(const void* address, std::size_t alignment, const char* what) {
  const auto value = reinterpret_cast<std::uintptr_t>(address);
  if (value % alignment == 0) return;
  char hex[32];
  std::snprintf(hex, sizeof hex, "%#llx", static_cast<unsigned long long>(value));
  std::string place = active_run != nullptr ? " in " + where(*active_run) + ": " + thread_name(*active_run, active_run->current) : "";
  throw std::runtime_error("emulator memcheck: misaligned address" + place + ": a " + std::to_string(alignment) +
                           "-byte " + what + " at " + hex + " is not " + std::to_string(alignment) +
                           "-byte aligned (a GPU stops the kernel with 'misaligned address')");
}

}  // namespace ember::emulate
