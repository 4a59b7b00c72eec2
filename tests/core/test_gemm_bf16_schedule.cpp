// Tests for core/cpu/gemm_bf16_schedule.h: how the bfloat16 GEMM's threads share a product.
// Whatever the thread count and whoever runs first, every A panel is packed exactly once (or,
// with a copy of A per thread, once per copy a thread used), every B panel exactly once, every
// unit is computed exactly once, and a unit is handed out only after every panel it reads is
// packed. (The products themselves are tested in test_gemm_bfloat16.cpp.)
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <sstream>
#include <vector>

#include <ember/core/cpu/gemm_bf16_schedule.h>
#include <ember/core/parallel.h>

namespace ember {
namespace {

using cpu::bf16_schedule::Shape;

struct Counts {
  std::unique_ptr<std::atomic<int>[]> a, b, units;  // a: copy c's panel r at c * row_panels + r
  explicit Counts(const Shape& s, int threads, std::int64_t units_total)
      : a(std::make_unique<std::atomic<int>[]>(static_cast<std::size_t>(s.row_panels * threads))),
        b(std::make_unique<std::atomic<int>[]>(static_cast<std::size_t>(s.col_panels))),
        units(std::make_unique<std::atomic<int>[]>(static_cast<std::size_t>(units_total))) {}
};

// Runs the schedule with counting callbacks; returns how many units saw an unpacked panel.
int run_counting(const Shape& shape, int threads, Counts& counts) {
  std::atomic<int> early{0};
  cpu::bf16_schedule::run(
      shape, threads, [&](std::int64_t r, std::int64_t copy) { counts.a[copy * shape.row_panels + r].fetch_add(1); },
      [&](std::int64_t q) { counts.b[q].fetch_add(1); },
      [&](const auto& next_unit, std::int64_t copy) {
        for (std::int64_t unit; (unit = next_unit()) >= 0;) {
          counts.units[unit].fetch_add(1);
          const std::int64_t r = unit % shape.row_panels, first_q = unit / shape.row_panels * shape.group;
          if (counts.a[copy * shape.row_panels + r].load() != 1) early.fetch_add(1);
          for (std::int64_t q = first_q; q < std::min(shape.col_panels, first_q + shape.group); ++q)
            if (shape.pack_b && counts.b[q].load() != 1) early.fetch_add(1);
        }
      });
  return early.load();
}

}  // namespace

TEST_CASE("bfloat16 GEMM schedule: every panel packed once and every unit run once after its panels, for any "
          "thread count",
          "[gemm][reduced_float]") {
  const int saved_threads = get_num_threads();
  struct Case {
    std::int64_t row_panels, col_panels, group;
    bool pack_b, a_per_thread;
  };
  // Groups that divide evenly among the threads, groups fewer than the threads (owners with
  // nothing of their own: they only help), a partial last group, B given packed, and a copy
  // of A per thread.
  const Case cases[] = {{4, 8, 4, true, false}, {5, 3, 1, true, false}, {1, 1, 1, true, false},
                        {7, 10, 3, true, false}, {3, 9, 2, false, false}, {32, 32, 16, true, false},
                        {4, 8, 4, true, true},   {5, 3, 1, true, true},   {3, 9, 2, false, true}};
  for (const Case& c : cases) {
    for (int threads : {1, 2, 3, 5}) {
      set_num_threads(threads);
      const Shape shape{c.row_panels, c.col_panels, c.group, c.pack_b, c.a_per_thread && threads > 1};
      const std::int64_t units = (c.col_panels + c.group - 1) / c.group * c.row_panels;
      for (int repeat = 0; repeat < 20; ++repeat) {  // different interleavings
        Counts counts(shape, threads, units);
        std::ostringstream where;
        where << c.row_panels << " row panels, " << c.col_panels << " column panels in groups of " << c.group
              << (c.pack_b ? "" : ", B packed already") << (shape.a_per_thread ? ", A per thread" : "") << ", "
              << threads << " threads";
        INFO(where.str());
        CHECK(run_counting(shape, threads, counts) == 0);
        for (int copy = 0; copy < threads; ++copy) {
          // Shared: copy 0 packed once. Per thread: a copy is packed whole once, or not at all
          // (its thread found no unit left).
          const int expected = shape.a_per_thread ? counts.a[copy * c.row_panels].load() : copy == 0 ? 1 : 0;
          CHECK(expected <= 1);
          for (std::int64_t r = 0; r < c.row_panels; ++r) CHECK(counts.a[copy * c.row_panels + r].load() == expected);
        }
        for (std::int64_t q = 0; q < c.col_panels; ++q) CHECK(counts.b[q].load() == (c.pack_b ? 1 : 0));
        for (std::int64_t u = 0; u < units; ++u) CHECK(counts.units[u].load() == 1);
      }
    }
  }
  set_num_threads(saved_threads);
}

TEST_CASE("bfloat16 GEMM schedule: a group's B panels fit half an L2 and every thread gets four units; small A "
          "packed per thread",
          "[gemm][reduced_float]") {
  using cpu::bf16_schedule::column_group_panels;
  // 1024 x 1024 on AMX: 32 column panels of 64 KiB, 32 row blocks, 2 threads: 16 panels (1 MiB).
  CHECK(column_group_panels(32, 32, 64 << 10, 2) == 16);
  // The MLP's 128 x 784 x 256: 8 panels, 4 row blocks: 4 panels a group, 8 units.
  CHECK(column_group_panels(8, 4, 800 * 64, 2) == 4);
  // Few units: one panel a group.
  CHECK(column_group_panels(3, 5, 1024, 2) == 1);
  // Panels larger than the budget: still one.
  CHECK(column_group_panels(4, 64, 4 << 20, 1) == 1);
  // A copy of A per thread for the MLP's A (200 KiB), not for 1024 x 1024's (2 MiB), never alone.
  CHECK(cpu::bf16_schedule::a_per_thread_pays(200 << 10, 2));
  CHECK_FALSE(cpu::bf16_schedule::a_per_thread_pays(2 << 20, 2));
  CHECK_FALSE(cpu::bf16_schedule::a_per_thread_pays(200 << 10, 1));
}

}  // namespace ember
