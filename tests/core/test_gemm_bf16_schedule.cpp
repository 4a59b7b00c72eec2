// Tests for core/cpu/gemm_bf16_schedule.h: how the bfloat16 GEMM's threads share a product.
// Whatever the thread count, whichever operand the threads own, and whoever runs first: every
// panel of a copy is packed exactly once (a per-thread copy of the shared operand whole or
// not at all), every unit is computed exactly once, and a unit is handed out only after every
// panel it reads, in the copies it is given, is packed. (The products themselves are tested
// in test_gemm_bfloat16.cpp.)
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <sstream>

#include <ember/core/cpu/gemm_bf16_schedule.h>
#include <ember/core/parallel.h>

namespace ember {
namespace {

using ScheduleShape = cpu::bf16_schedule::Shape;

std::unique_ptr<std::atomic<int>[]> counters(std::int64_t n) {
  return std::make_unique<std::atomic<int>[]>(static_cast<std::size_t>(n));
}

struct Counts {
  // a: copy c's panel r at c * row_panels + r; b likewise with col_panels.
  std::unique_ptr<std::atomic<int>[]> a, b, units;
  Counts(const ScheduleShape& s, int threads)
      : a(counters(s.row_panels * threads)), b(counters(s.col_panels * threads)),
        units(counters(s.groups() * s.row_panels)) {}
};

// Runs the schedule with counting callbacks; returns how many units saw an unpacked panel.
int run_counting(const ScheduleShape& shape, int threads, Counts& counts) {
  std::atomic<int> early{0};
  cpu::bf16_schedule::run(
      shape, threads, [&](std::int64_t r, std::int64_t copy) { counts.a[copy * shape.row_panels + r].fetch_add(1); },
      [&](std::int64_t q, std::int64_t copy) { counts.b[copy * shape.col_panels + q].fetch_add(1); },
      [&](const auto& next_unit, std::int64_t a_copy, std::int64_t b_copy) {
        for (std::int64_t unit; (unit = next_unit()) >= 0;) {
          counts.units[unit].fetch_add(1);
          const std::int64_t r = unit % shape.row_panels, first_q = unit / shape.row_panels * shape.group;
          if (counts.a[a_copy * shape.row_panels + r].load() != 1) early.fetch_add(1);
          for (std::int64_t q = first_q; q < std::min(shape.col_panels, first_q + shape.group); ++q)
            if (shape.pack_b && counts.b[b_copy * shape.col_panels + q].load() != 1) early.fetch_add(1);
        }
      });
  return early.load();
}

// Copies 0..threads-1 of an operand of `panels` panels: the one packed copy (copy 0), or, for
// a shared operand packed per thread, each copy whole or not at all.
void check_copies(const std::unique_ptr<std::atomic<int>[]>& counts, std::int64_t panels, int threads,
                  bool per_thread, bool packed) {
  for (int copy = 0; copy < threads; ++copy) {
    const int expected = !packed ? 0 : per_thread ? counts[copy * panels].load() : copy == 0 ? 1 : 0;
    CHECK(expected <= 1);
    for (std::int64_t p = 0; p < panels; ++p) CHECK(counts[copy * panels + p].load() == expected);
  }
}

}  // namespace

TEST_CASE("bfloat16 GEMM schedule: every panel packed once and every unit run once after its panels, for any "
          "thread count and either owned operand",
          "[gemm][reduced_float]") {
  const int saved_threads = get_num_threads();
  struct Case {
    std::int64_t row_panels, col_panels, group;
    bool pack_b, own_rows, shared_per_thread;
  };
  // Column groups owned: groups that divide evenly among the threads, fewer groups than
  // threads (owners with nothing of their own: they only help), a partial last group, B given
  // packed, A per thread. Rows owned (tall, narrow products): B shared or per thread, given
  // packed, more threads than rows.
  const Case cases[] = {{4, 8, 4, true, false, false},  {5, 3, 1, true, false, false},
                        {1, 1, 1, true, false, false},  {7, 10, 3, true, false, false},
                        {3, 9, 2, false, false, false}, {32, 32, 16, true, false, false},
                        {4, 8, 4, true, false, true},   {5, 3, 1, true, false, true},
                        {3, 9, 2, false, false, true},  {64, 4, 4, true, true, false},
                        {64, 4, 4, true, true, true},   {9, 5, 2, true, true, true},
                        {9, 5, 5, false, true, false},  {2, 3, 3, true, true, true}};
  for (const Case& c : cases) {
    for (int threads : {1, 2, 3, 5}) {
      set_num_threads(threads);
      const bool per_thread = c.shared_per_thread && threads > 1;
      const ScheduleShape shape{c.row_panels, c.col_panels, c.group,
                                c.pack_b, c.own_rows, per_thread};
      for (int repeat = 0; repeat < 20; ++repeat) {  // different interleavings
        Counts counts(shape, threads);
        std::ostringstream where;
        where << c.row_panels << " row panels, " << c.col_panels << " column panels in groups of " << c.group
              << (c.pack_b ? "" : ", B packed already") << (c.own_rows ? ", rows owned" : ", columns owned")
              << (per_thread ? ", shared operand per thread" : "") << ", " << threads << " threads";
        INFO(where.str());
        CHECK(run_counting(shape, threads, counts) == 0);
        check_copies(counts.a, c.row_panels, threads, per_thread && !c.own_rows, true);
        check_copies(counts.b, c.col_panels, threads, per_thread && c.own_rows, c.pack_b);
        for (std::int64_t u = 0; u < shape.groups() * c.row_panels; ++u) CHECK(counts.units[u].load() == 1);
      }
    }
  }
  set_num_threads(saved_threads);
}

TEST_CASE("bfloat16 GEMM schedule: groups fit half an L2, four units a thread, tall products own rows, small shared "
          "operands packed per thread",
          "[gemm][reduced_float]") {
  using cpu::bf16_schedule::column_group_panels;
  using cpu::bf16_schedule::plan;
  // 1024 x 1024 on AMX: 32 column panels of 64 KiB, 32 row blocks, 2 threads: 16 panels (1 MiB).
  CHECK(column_group_panels(32, 32, 64 << 10, 2) == 16);
  // The MLP's 128 x 784 x 256: 8 panels, 4 row blocks: 4 panels a group, 8 units.
  CHECK(column_group_panels(8, 4, 800 * 64, 2) == 4);
  // Few units: one panel a group. Panels larger than the budget: still one.
  CHECK(column_group_panels(3, 5, 1024, 2) == 1);
  CHECK(column_group_panels(4, 64, 4 << 20, 1) == 1);

  // 1024 x 1024: two groups for two threads own columns; A (2 MiB) is shared, packed once.
  ScheduleShape s = plan(32, 32, 64 << 10, 64 << 10, true, 2);
  CHECK_FALSE(s.own_rows);
  CHECK_FALSE(s.shared_per_thread);
  // The MLP's 128 x 784 x 256: columns owned, A (200 KiB) packed by each thread.
  s = plan(4, 8, 50 << 10, 50 << 10, true, 2);
  CHECK_FALSE(s.own_rows);
  CHECK(s.shared_per_thread);
  // The GPT's 2048 x 512 x 128: one group of 4 panels, 64 row blocks: rows owned, B (128 KiB)
  // packed by each thread; given packed, there is nothing to share.
  s = plan(64, 4, 32 << 10, 32 << 10, true, 2);
  CHECK(s.own_rows);
  CHECK(s.shared_per_thread);
  CHECK_FALSE(plan(64, 4, 32 << 10, 32 << 10, false, 2).shared_per_thread);
  // One thread: nothing owned, nothing copied.
  s = plan(64, 4, 32 << 10, 32 << 10, true, 1);
  CHECK_FALSE(s.own_rows);
  CHECK_FALSE(s.shared_per_thread);
}

}  // namespace ember
