// core/cpu/gemm_bf16_schedule.h — performance code: how the threads of one bfloat16 GEMM
// (core/cpu/gemm_kernel_bf16_avx512.cpp) share its packing and its tiles.
//
// The product is cut into A's row panels, B's column panels, and units of work: one row
// panel against a group of consecutive column panels. Each thread *owns* a contiguous range of
// one operand's panels — B's column groups, or A's row panels where there are fewer column
// groups than threads (a tall, narrow product: the GPT's Linear layers) — packs them and runs
// their units first, so most of what it reads was written by its own core: a panel another
// core packed sits modified in that core's cache, and reading it there made two threads
// slower than one on the MLP's products (docs/mixed-precision.md). The other operand is
// *shared*: every thread reads all of it. A small one is packed by every thread for itself;
// a large one by whichever thread claims each panel. A thread that runs out of its own work
// helps the others: it packs the owned panels they have not started and takes the units they
// have not claimed.
//
// Every piece of work is claimed from an atomic counter, so a thread that starts late (the
// pool's wake-up) finds less to do, and no thread waits for work nobody started: a thread
// waits only for panels another thread is packing right now. Every C element is computed by
// one unit in the order of k, so the result does not depend on who ran what.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>

#include <ember/core/parallel.h>

namespace ember::cpu::bf16_schedule {

// B panels per column group: a group's panels take at most half of a 2 MiB L2, so they stay
// there while A's panels pass over them (each A panel then comes from beyond L2 once per
// group), and groups are narrowed until every thread has at least four units.
constexpr std::int64_t kColumnGroupBytes = std::int64_t{1} << 20;
inline std::int64_t column_group_panels(std::int64_t col_panels, std::int64_t row_panels,
                                        std::int64_t b_panel_bytes, int threads) {
  const std::int64_t fit_l2 = std::max<std::int64_t>(1, kColumnGroupBytes / std::max<std::int64_t>(1, b_panel_bytes));
  const std::int64_t balanced = std::max<std::int64_t>(1, col_panels * row_panels / (4 * std::int64_t{threads}));
  return std::max<std::int64_t>(1, std::min({fit_l2, balanced, col_panels}));
}

// A shared operand up to this size is packed by every thread for itself: packing it again
// costs less than reading the panels another core packed (the MLP's 128 x 784 x 256 product:
// A 200 KiB). A larger one is packed once: its panels come from L3 for every group anyway.
constexpr std::int64_t kPerThreadBytes = std::int64_t{512} << 10;

struct Shape {
  std::int64_t row_panels, col_panels;
  std::int64_t group;       // column panels per unit (column_group_panels)
  bool pack_b;              // false where B came packed already
  bool own_rows;            // threads own A's row panels (B shared), else B's column groups (A shared)
  bool shared_per_thread;   // every thread packs its own copy of the shared operand

  std::int64_t groups() const { return (col_panels + group - 1) / group; }
};

// The shape for a product of row_panels x col_panels panels on `threads` threads.
inline Shape plan(std::int64_t row_panels, std::int64_t col_panels, std::int64_t a_panel_bytes,
                  std::int64_t b_panel_bytes, bool pack_b, int threads) {
  Shape s{row_panels, col_panels, column_group_panels(col_panels, row_panels, b_panel_bytes, threads), pack_b,
          false, false};
  s.own_rows = s.groups() < threads && row_panels >= threads;
  const std::int64_t shared_bytes = s.own_rows ? (pack_b ? col_panels * b_panel_bytes : 0) : row_panels * a_panel_bytes;
  s.shared_per_thread = threads > 1 && shared_bytes > 0 && shared_bytes <= kPerThreadBytes;
  return s;
}

// Runs the product on `threads` threads:
//   pack_a(r, copy)  packs A's row panel r into copy `copy` of packed A;
//   pack_b(q, copy)  packs B's column panel q into copy `copy` of packed B (only if shape.pack_b);
//   compute(next_unit, a_copy, b_copy)  runs the tiles on those copies: it calls next_unit()
//                until it returns -1; unit u is row panel u % row_panels against column panels
//                [u / row_panels * group, + group) (clipped to col_panels).
// Copies: the shared operand's copy t is thread t's where shape.shared_per_thread; every
// other copy number is 0. compute runs once per thread, so it can set up per-thread state
// (AMX's tile configuration) around its loop. A unit next_unit() returns has every panel it
// reads packed.
template <class PackA, class PackB, class Compute>
void run(const Shape& shape, int threads, const PackA& pack_a, const PackB& pack_b, const Compute& compute) {
  const std::int64_t groups = shape.groups(), rows = shape.row_panels;
  // The owned operand's panels of an owner: [begin, end) of A's rows or of B's columns.
  const auto owned_range = [&](std::int64_t owner, std::int64_t& begin, std::int64_t& end) {
    if (shape.own_rows) {
      begin = rows * owner / threads;
      end = rows * (owner + 1) / threads;
    } else {
      begin = std::min(shape.col_panels, groups * owner / threads * shape.group);
      end = std::min(shape.col_panels, groups * (owner + 1) / threads * shape.group);
    }
  };
  const auto pack_owned = [&](std::int64_t panel) {
    if (shape.own_rows) pack_a(panel, 0);
    else if (shape.pack_b) pack_b(panel, 0);
  };
  const bool owned_need_packing = shape.own_rows || shape.pack_b;
  const std::int64_t shared_panels = shape.own_rows ? (shape.pack_b ? shape.col_panels : 0) : rows;
  const auto pack_shared = [&](std::int64_t panel, std::int64_t copy) {
    if (shape.own_rows) pack_b(panel, copy);
    else pack_a(panel, copy);
  };
  // An owner's units: `count` of them, the i-th unit at(i) (row by row within a group, so a
  // group's B panels stay in L2 while the rows pass).
  struct OwnedUnits {
    std::int64_t count, first, row_begin, row_span, rows;
    bool by_rows;
    std::int64_t at(std::int64_t i) const { return by_rows ? i / row_span * rows + row_begin + i % row_span : first + i; }
  };
  const auto owned_units = [&](std::int64_t owner) {
    if (shape.own_rows) {
      std::int64_t begin, end;
      owned_range(owner, begin, end);
      return OwnedUnits{(end - begin) * groups, 0, begin, end - begin, rows, true};
    }
    const std::int64_t first_group = groups * owner / threads, last_group = groups * (owner + 1) / threads;
    return OwnedUnits{(last_group - first_group) * rows, first_group * rows, 0, 0, rows, false};
  };

  // One thread, or a call nested in another parallel region (which runs inline: the
  // convolution's per-sample products): plain loops, no atomics (a locked add per panel and
  // per unit cost a few percent there).
  const auto alone = [&] {
    for (std::int64_t r = 0; r < rows; ++r) pack_a(r, 0);
    if (shape.pack_b)
      for (std::int64_t q = 0; q < shape.col_panels; ++q) pack_b(q, 0);
    std::int64_t unit = 0;
    const std::int64_t units = groups * rows;
    compute([&]() -> std::int64_t { return unit < units ? unit++ : -1; }, std::int64_t{0}, std::int64_t{0});
  };
  if (threads <= 1) {
    alone();
    return;
  }

  // Per owner: its next owned panel to pack, how many of them are packed, its next unit
  // (each counter on its own cache line, as every thread writes them).
  struct alignas(64) Owner {
    std::atomic<std::int64_t> next_panel{0}, packed{0}, next_unit{0};
  };
  const auto owners = std::make_unique<Owner[]>(static_cast<std::size_t>(threads));
  alignas(64) std::atomic<std::int64_t> next_shared{0}, shared_packed{0};

  // Packs the owned panels of `owner` nobody has claimed, then waits for those others are packing.
  const auto finish_owned_panels = [&](std::int64_t owner) {
    if (!owned_need_packing) return;
    std::int64_t begin, end;
    owned_range(owner, begin, end);
    Owner& o = owners[owner];
    for (std::int64_t p; (p = begin + o.next_panel.fetch_add(1, std::memory_order_relaxed)) < end;) {
      pack_owned(p);
      o.packed.fetch_add(1, std::memory_order_release);
    }
    while (o.packed.load(std::memory_order_acquire) < end - begin) cpu_relax();
  };

  parallel_for(0, threads, 1, [&](std::int64_t first, std::int64_t last) {
    if (last - first >= threads) {  // given the whole range: nested, running inline
      alone();
      return;
    }
    const std::int64_t self = first;
    if (!shape.shared_per_thread) {
      for (std::int64_t p; (p = next_shared.fetch_add(1, std::memory_order_relaxed)) < shared_panels;) {
        pack_shared(p, 0);
        shared_packed.fetch_add(1, std::memory_order_release);
      }
    }
    finish_owned_panels(self);
    while (!shape.shared_per_thread && shared_packed.load(std::memory_order_acquire) < shared_panels) cpu_relax();

    std::int64_t owner = self;  // own units first, then the next owners' in turn
    int owners_tried = 0;
    bool own_copy_packed = !shape.shared_per_thread;
    const std::int64_t copy = shape.shared_per_thread ? self : 0;
    compute(
        [&]() -> std::int64_t {
          while (owners_tried < threads) {
            const OwnedUnits units = owned_units(owner);
            const std::int64_t i = owners[owner].next_unit.fetch_add(1, std::memory_order_relaxed);
            if (i < units.count) {
              if (!own_copy_packed) {  // a copy of the shared operand only for a thread with a unit to run
                for (std::int64_t p = 0; p < shared_panels; ++p) pack_shared(p, copy);
                own_copy_packed = true;
              }
              return units.at(i);
            }
            ++owners_tried;
            owner = (owner + 1) % threads;
            if (owners_tried < threads) finish_owned_panels(owner);  // before taking its units
          }
          return std::int64_t{-1};
        },
        shape.own_rows ? std::int64_t{0} : copy, shape.own_rows ? copy : std::int64_t{0});
  });
}

}  // namespace ember::cpu::bf16_schedule
