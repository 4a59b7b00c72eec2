// core/cpu/gemm_bf16_schedule.h — performance code: how the threads of one bfloat16 GEMM
// (core/cpu/gemm_kernel_bf16_avx512.cpp) share its packing and its tiles.
//
// The product is cut into A's row panels, B's column panels, and units of work: one row
// panel against a group of consecutive column panels. Every thread reads all of A, so A's
// panels are packed by whichever thread claims them. B's column groups are dealt out instead:
// thread t owns a contiguous range of them, packs their B panels and computes their units
// first, so the B panels it reads were written by its own core (read from the other core's
// cache, they made two threads slower than one on the MLP's products: docs/mixed-precision.md).
// A thread that runs out of its own work helps the others: it packs the B panels they have not
// started and takes the units they have not claimed.
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
// there while the threads pass A's panels over them (each A panel then comes from beyond L2
// once per group), and groups are narrowed until every thread has at least four units.
constexpr std::int64_t kColumnGroupBytes = std::int64_t{1} << 20;
inline std::int64_t column_group_panels(std::int64_t col_panels, std::int64_t row_panels,
                                        std::int64_t b_panel_bytes, int threads) {
  const std::int64_t fit_l2 = std::max<std::int64_t>(1, kColumnGroupBytes / std::max<std::int64_t>(1, b_panel_bytes));
  const std::int64_t balanced = std::max<std::int64_t>(1, col_panels * row_panels / (4 * std::int64_t{threads}));
  return std::max<std::int64_t>(1, std::min({fit_l2, balanced, col_panels}));
}

struct Shape {
  std::int64_t row_panels, col_panels;
  std::int64_t group;  // column panels per unit (column_group_panels)
  bool pack_b;         // false where B came packed already
  bool a_per_thread;   // every thread packs its own copy of A (a_per_thread_pays)
};

// Whether each thread should pack all of A for itself rather than share one packed A: where
// packed A is small, packing it again costs less than reading the panels another core packed
// from that core's cache (on the MLP's 128 x 784 x 256 product two threads were no faster
// than one with A shared). Large A is shared: its blocks come from L3 for every group anyway.
constexpr std::int64_t kPerThreadABytes = std::int64_t{512} << 10;
inline bool a_per_thread_pays(std::int64_t packed_a_bytes, int threads) {
  return threads > 1 && packed_a_bytes <= kPerThreadABytes;
}

// Runs the product on `threads` threads:
//   pack_a(r, copy)  packs A's row panel r into copy `copy` of packed A (always 0 unless
//                shape.a_per_thread; then copy t is thread t's);
//   pack_b(q)    packs B's column panel q (only if shape.pack_b);
//   compute(next_unit, copy)  runs the tiles on A's copy `copy`: it calls next_unit() until
//                it returns -1; unit u is row panel u % row_panels against column panels
//                [u / row_panels * group, + group) (clipped to col_panels).
// compute runs once per thread, so it can set up per-thread state (AMX's tile configuration)
// around its loop. A unit next_unit() returns has its A and B panels packed.
template <class PackA, class PackB, class Compute>
void run(const Shape& shape, int threads, const PackA& pack_a, const PackB& pack_b, const Compute& compute) {
  const std::int64_t groups = (shape.col_panels + shape.group - 1) / shape.group;
  const auto first_group = [&](std::int64_t owner) { return groups * owner / threads; };
  const auto b_panels_of = [&](std::int64_t owner, std::int64_t& begin, std::int64_t& end) {
    begin = shape.pack_b ? std::min(shape.col_panels, first_group(owner) * shape.group) : 0;
    end = shape.pack_b ? std::min(shape.col_panels, first_group(owner + 1) * shape.group) : 0;
  };

  // One thread, or a call nested in another parallel region (which runs inline: the
  // convolution's per-sample products): plain loops, no atomics (a locked add per panel and
  // per unit cost a few percent there).
  const auto alone = [&] {
    for (std::int64_t r = 0; r < shape.row_panels; ++r) pack_a(r, 0);
    if (shape.pack_b)
      for (std::int64_t q = 0; q < shape.col_panels; ++q) pack_b(q);
    std::int64_t unit = 0;
    const std::int64_t units = groups * shape.row_panels;
    compute([&]() -> std::int64_t { return unit < units ? unit++ : -1; }, 0);
  };
  if (threads <= 1) {
    alone();
    return;
  }

  // Per owner: its next B panel to pack, how many of its B panels are packed, its next unit
  // (each counter on its own cache line, as both threads write them).
  struct alignas(64) Owner {
    std::atomic<std::int64_t> next_b{0}, b_packed{0}, next_unit{0};
  };
  const auto owners = std::make_unique<Owner[]>(static_cast<std::size_t>(threads));
  alignas(64) std::atomic<std::int64_t> next_a{0}, a_packed{0};

  // Packs the B panels of `owner` nobody has claimed, then waits for those others are packing.
  const auto finish_b_panels = [&](std::int64_t owner) {
    std::int64_t begin, end;
    b_panels_of(owner, begin, end);
    Owner& o = owners[owner];
    for (std::int64_t q; (q = begin + o.next_b.fetch_add(1, std::memory_order_relaxed)) < end;) {
      pack_b(q);
      o.b_packed.fetch_add(1, std::memory_order_release);
    }
    while (o.b_packed.load(std::memory_order_acquire) < end - begin) cpu_relax();
  };

  parallel_for(0, threads, 1, [&](std::int64_t first, std::int64_t last) {
    if (last - first >= threads) {  // given the whole range: nested, running inline
      alone();
      return;
    }
    const std::int64_t self = first;
    if (!shape.a_per_thread) {
      for (std::int64_t r; (r = next_a.fetch_add(1, std::memory_order_relaxed)) < shape.row_panels;) {
        pack_a(r, 0);
        a_packed.fetch_add(1, std::memory_order_release);
      }
    }
    finish_b_panels(self);
    while (!shape.a_per_thread && a_packed.load(std::memory_order_acquire) < shape.row_panels) cpu_relax();

    std::int64_t owner = self;  // own units first, then the next owners' in turn
    int owners_tried = 0;
    bool own_a_packed = !shape.a_per_thread;
    compute([&]() -> std::int64_t {
      while (owners_tried < threads) {
        const std::int64_t begin = first_group(owner) * shape.row_panels;
        const std::int64_t end = first_group(owner + 1) * shape.row_panels;
        const std::int64_t unit = begin + owners[owner].next_unit.fetch_add(1, std::memory_order_relaxed);
        if (unit < end) {
          if (!own_a_packed) {  // a copy of A only for a thread that has a unit to run
            for (std::int64_t r = 0; r < shape.row_panels; ++r) pack_a(r, self);
            own_a_packed = true;
          }
          return unit;
        }
        ++owners_tried;
        owner = (owner + 1) % threads;
        if (owners_tried < threads) finish_b_panels(owner);  // before taking its units
      }
      return -1;
    }, shape.a_per_thread ? self : 0);
  });
}

}  // namespace ember::cpu::bf16_schedule
