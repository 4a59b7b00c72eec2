// core/cpu/gemm_driver.h — running one planned GEMM: cache blocking, packing and threads.
//
// Tutorial §2.4 (matrix multiplication). Included by core/cpu/gemm.cpp only, which decides
// the orientation, the kernel and what to pack (Strategy); this runs it. The loop nest, in the
// spirit of Goto/BLIS, for one "unit" (a block of C rows and columns of one batch entry):
//
//   for each nc-wide column block                       B slice: kc x nc, stays in L2
//     for each kc-deep slice of k                       (C accumulates slice after slice)
//       for each MR-row panel of A in the unit          A panel: MR x kc, stays in L1
//         pack it (or point at A in place)
//         for each NR-column panel of B in the block
//           micro-kernel: MR x NR tile of C             lives in registers
//
// Threads share the work in one of two ways:
//   * claimed (large products): B is packed once per call into a buffer that all threads
//     share (when B must be packed): the copying is cut into pieces that the threads claim
//     first, then units of C are claimed the same way. Claiming is an atomic counter, so a
//     thread that arrives late (a pool thread still waking up) simply finds less to do, and
//     no thread ever waits for work that nobody has started: after the last piece of B is
//     claimed, the threads wait only for pieces that are being packed right now;
//   * fixed (small products, a few microseconds each): one unit per thread, thread t always
//     takes unit t. A C tile is then written by the same core call after call (a loop of
//     small GEMMs keeps its half of C in that core's cache instead of moving it between
//     cores), and the threads share nothing but the operands. A unit whose pool thread has
//     not started by the time the caller is done is run by the caller (core/parallel.cpp);
//   * fixed with private B (mid-sized products whose B is packed: the MLP's 784-wide layer):
//     the units are cut along C's columns, and each thread packs the B panels of its own
//     columns, slice by slice, into its own buffer. Nothing is shared, so no thread waits for
//     another's packing, and no packed panel moves between cores' caches.
// Every C element belongs to exactly one unit and sums its k slices in order, so the result
// does not depend on which thread ran what.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <memory>
#include <new>
#include <thread>
#include <tuple>
#include <type_traits>
#include <utility>

#include <ember/core/cpu/gemm_kernels.h>
#include <ember/core/cpu/gemm_pack.h>
#include <ember/core/element_math.h>
#include <ember/core/parallel.h>

namespace ember::cpu {

// One GEMM (all batch entries) in the orientation the kernel runs it:
// C(i, j) = c[i * c_rs + j * c_cs] and likewise for A and B; batch entry b adds b * x_batch.
template <class T>
struct Problem {
  std::int64_t batch = 1, m = 0, n = 0, k = 0;
  const T* a = nullptr;
  std::int64_t a_batch = 0, a_rs = 0, a_cs = 0;
  const T* b = nullptr;
  std::int64_t b_batch = 0, b_rs = 0, b_cs = 0;
  T* c = nullptr;
  std::int64_t c_batch = 0, c_rs = 0, c_cs = 0;
  T alpha = T(1), beta = T(0);
  bool beta_zero = true;
};

struct Strategy {
  bool pack_a = true;   // else A is read in place (needs a_rs == 1 or a_cs == 1)
  bool pack_b = true;   // else B is read in place (needs b_cs == 1)
  std::int64_t threads = 1;
  bool fixed_units = false;  // one unit per thread, thread t runs unit t (needs !pack_b or private_b)
  bool private_b = false;    // with fixed units cut along columns: each unit packs its own B panels

  // B is packed once, into one buffer every thread reads (the threads pack it piece by piece).
  bool shares_packed_b() const { return pack_b && !private_b; }
};

namespace driver {

// Packed B of one phase is at most this many elements (16 MiB of floats); larger products
// are run as several phases (batch entries or column blocks one after another).
constexpr std::int64_t kMaxPackedB = std::int64_t{4} << 20;
// B is packed in pieces of this many NR panels (a few microseconds of copying each).
constexpr std::int64_t kPanelsPerPackPiece = 4;
// With several threads, aim for this many units of C per thread, so that dynamic claiming
// evens out units of unequal size and a late-starting thread.
constexpr std::int64_t kUnitsPerThread = 8;

// A 64-byte-aligned scratch buffer (one cache line, one zmm), left uninitialised.
template <class T>
struct AlignedBuffer {
  explicit AlignedBuffer(std::int64_t size)
      : count(size),
        data(static_cast<T*>(::operator new[](static_cast<std::size_t>(size) * sizeof(T), std::align_val_t{64}))) {}
  ~AlignedBuffer() { ::operator delete[](data, std::align_val_t{64}); }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  std::int64_t count;
  T* data;
};

// Per-thread scratch, kept between calls (thread_local, grown when a larger GEMM needs more):
// a fresh multi-MiB buffer per call would come from mmap and page faults every time.
template <class T>
struct Workspace {
  std::unique_ptr<AlignedBuffer<T>> a_panel, b_edge, c_tile, packed_b, private_b;

  static T* ensure(std::unique_ptr<AlignedBuffer<T>>& buffer, std::int64_t size) {
    if (!buffer || buffer->count < size) buffer = std::make_unique<AlignedBuffer<T>>(std::max<std::int64_t>(size, 1));
    return buffer->data;
  }
  static Workspace& local() {
    thread_local Workspace workspace;
    return workspace;
  }
};

// One phase: batch entries [batch0, batch0 + batches) x NR panels [panel0, panel0 + panels)
// of C's columns, with the shared state the threads claim work from.
template <class T>
struct Phase {
  const Problem<T>* p;
  const MicroKernel<T>* kernel;
  const Strategy* strategy;
  std::int64_t batch0, batches, panel0, panels;
  std::int64_t slices;     // ceil(k / kc)
  T* packed_b = nullptr;   // [batch][slice][panel] blocks of kc x NR, when B is packed
  std::int64_t pack_pieces = 0, pieces_per_slice = 0;
  std::int64_t row_group = 0, col_group = 0, row_groups = 0, col_groups = 0, units = 0;
  std::atomic<std::int64_t> next_piece{0}, pieces_done{0}, next_unit{0};
  std::int64_t threads = 1;  // participants: the slots of parallel_for's range

  T* packed_panel(std::int64_t batch, std::int64_t slice, std::int64_t panel) const {
    return packed_b + ((batch * slices + slice) * panels + panel) * kernel->kc * kernel->nr;
  }
};

template <class T>
void pack_piece(const Phase<T>& ph, std::int64_t piece) {
  const Problem<T>& p = *ph.p;
  const MicroKernel<T>& kernel = *ph.kernel;
  const std::int64_t per_batch = ph.slices * ph.pieces_per_slice;
  const std::int64_t batch = piece / per_batch, slice = piece % per_batch / ph.pieces_per_slice;
  const std::int64_t first = piece % ph.pieces_per_slice * kPanelsPerPackPiece;
  const std::int64_t last = std::min(ph.panels, first + kPanelsPerPackPiece);
  const pack::MatrixRef<T> b{p.b + (ph.batch0 + batch) * p.b_batch, p.b_rs, p.b_cs};
  const std::int64_t depth0 = slice * kernel.kc, depth = std::min(kernel.kc, p.k - depth0);
  for (std::int64_t panel = first; panel < last; ++panel) {
    const std::int64_t col = (ph.panel0 + panel) * kernel.nr;
    pack::pack_b_panel(b, depth0, depth, col, std::min(kernel.nr, p.n - col), kernel,
                       ph.packed_panel(batch, slice, panel));
  }
}

// C[i, j] = alpha * tile[i, j] + beta * C[i, j] for the valid part of a tile, any C strides.
template <class T>
void store_tile(const T* tile, std::int64_t nr, const TileArgs<T>& t, T* c, std::int64_t rs, std::int64_t cs) {
  for (std::int64_t i = 0; i < t.rows; ++i)
    for (std::int64_t j = 0; j < t.cols; ++j) {
      T& out = c[i * rs + j * cs];
      const T value = math::mul(t.alpha, tile[i * nr + j]);
      if (!t.read_c) out = value;
      else if constexpr (std::is_floating_point_v<T>) out = std::fma(t.beta, out, value);  // as the kernels
      else out = math::add(value, math::mul(t.beta, out));  // integers wrap (core/element_math.h)
    }
}

// One unit: batch entry `batch` (phase-relative), A panels [mp0, mp1), B panels [q0, q1).
template <class T>
void compute_unit(const Phase<T>& ph, Workspace<T>& work, std::int64_t batch, std::int64_t mp0, std::int64_t mp1,
                  std::int64_t q0, std::int64_t q1) {
  const Problem<T>& p = *ph.p;
  const MicroKernel<T>& kernel = *ph.kernel;
  const Strategy& s = *ph.strategy;
  const std::int64_t mr = kernel.mr, nr = kernel.nr, kc = kernel.kc;
  const pack::MatrixRef<T> a{p.a + (ph.batch0 + batch) * p.a_batch, p.a_rs, p.a_cs};
  const pack::MatrixRef<T> b{p.b + (ph.batch0 + batch) * p.b_batch, p.b_rs, p.b_cs};
  T* const c = p.c + (ph.batch0 + batch) * p.c_batch;
  const std::int64_t block_panels = std::max<std::int64_t>(1, kernel.nc / nr);
  const bool c_in_place = p.c_cs == 1;
  TileArgs<T> t;
  t.b_panel_step = s.pack_b ? kc * nr : nr;  // from one B panel to the next; in place, B has unit column stride

  for (std::int64_t jb0 = q0; jb0 < q1; jb0 += block_panels) {
    const std::int64_t jb1 = std::min(q1, jb0 + block_panels);
    for (std::int64_t slice = 0; slice < ph.slices; ++slice) {
      const std::int64_t depth0 = slice * kc, depth = std::min(kc, p.k - depth0);
      // The first k slice applies the caller's beta; later slices add onto what is there.
      const bool read_c = slice > 0 || !p.beta_zero;
      const T beta = slice > 0 ? T(1) : p.beta;
      // B read in place: a panel that ends inside the matrix is read with masked loads by the
      // SIMD kernels; the portable kernel reads NR columns per k step, so for it the panel is
      // copied aside (zero-padded).
      const std::int64_t edge_col = (ph.panel0 + jb1 - 1) * nr;
      const bool has_edge = !s.pack_b && edge_col + nr > p.n;
      const bool copy_edge = has_edge && !kernel.reads_partial_b;
      if (copy_edge) pack::pack_b_panel(b, depth0, depth, edge_col, p.n - edge_col, kernel, work.b_edge->data);
      // Private B: this slice of the block's panels, packed by the thread that reads them.
      if (s.private_b)
        for (std::int64_t q = jb0; q < jb1; ++q) {
          const std::int64_t col = (ph.panel0 + q) * nr;
          pack::pack_b_panel(b, depth0, depth, col, std::min(nr, p.n - col), kernel,
                             work.private_b->data + (q - jb0) * kc * nr);
        }

      for (std::int64_t mp = mp0; mp < mp1; ++mp) {
        const std::int64_t row = mp * mr, rows = std::min(mr, p.m - row);
        TileFn<T> run = kernel.tile_a_kstep;
        if (s.pack_a) {
          pack::pack_a_panel(a, row, rows, depth0, depth, kernel, work.a_panel->data);
          t.a = work.a_panel->data;
          t.a_row_step = 1;
          t.a_k_step = mr;
        } else {
          t.a = a.at(row, depth0);
          t.a_row_step = p.a_rs;
          t.a_k_step = p.a_cs;
          if (p.a_rs != 1) run = kernel.tile_a_rows;  // row-major A: a_cs == 1
        }
        t.k = depth;
        t.rows = rows;
        for (std::int64_t q = jb0; q < jb1; q += t.panels) {
          const std::int64_t col = (ph.panel0 + q) * nr;
          t.cols = std::min(nr, p.n - col);
          // C in place: the whole panels from q on go to the kernel in one call (a row of
          // tiles), so a short k loop does not pay the call and the set-up per tile.
          t.panels = c_in_place && t.cols == nr ? std::min(jb1, p.n / nr - ph.panel0) - q : 1;
          t.b_partial = false;
          if (s.private_b) {
            t.b = work.private_b->data + (q - jb0) * kc * nr;
            t.b_k_step = nr;
          } else if (s.pack_b) {
            t.b = ph.packed_panel(batch, slice, q);
            t.b_k_step = nr;
          } else if (copy_edge && q == jb1 - 1) {
            t.b = work.b_edge->data;
            t.b_k_step = nr;
          } else {
            t.b = b.at(depth0, col);
            t.b_k_step = p.b_rs;
            t.b_partial = has_edge && q == jb1 - 1;
          }
          T* c_tile = c + row * p.c_rs + col * p.c_cs;
          if (c_in_place) {
            t.c = c_tile;
            t.c_row_stride = p.c_rs;
            t.alpha = p.alpha;
            t.beta = beta;
            t.read_c = read_c;
            run(t);
          } else {
            // A strided C: compute the tile aside, then store its valid part element by element.
            t.c = work.c_tile->data;
            t.c_row_stride = nr;
            t.alpha = T(1);
            t.beta = T(0);
            t.read_c = false;
            run(t);
            t.alpha = p.alpha;
            t.beta = beta;
            t.read_c = read_c;
            store_tile(work.c_tile->data, nr, t, c_tile, p.c_rs, p.c_cs);
          }
        }
      }
    }
  }
}

// Spins until `done()` holds. Used only to wait for work that running threads have claimed.
template <class Done>
void spin_until(Done done) {
  for (std::int64_t spins = 0; !done(); ++spins) {
    cpu_relax();
    if (spins > 1024) std::this_thread::yield();  // about 40 us: let a descheduled thread run
  }
}

// Runs unit `unit` of the phase (units are numbered batch entry, then row group, then column group).
template <class T>
void run_unit(const Phase<T>& ph, Workspace<T>& work, std::int64_t unit) {
  const std::int64_t mp_total = (ph.p->m + ph.kernel->mr - 1) / ph.kernel->mr;
  const std::int64_t per_batch = ph.row_groups * ph.col_groups;
  const std::int64_t batch = unit / per_batch, row_group = unit % per_batch / ph.col_groups;
  const std::int64_t col_group = unit % ph.col_groups;
  compute_unit(ph, work, batch, row_group * ph.row_group, std::min(mp_total, (row_group + 1) * ph.row_group),
               col_group * ph.col_group, std::min(ph.panels, (col_group + 1) * ph.col_group));
}

// What the threads run, one call per chunk [begin, end) of parallel_for's range [0, threads)
// (a chunk of several slots is several participants run as one; a GEMM called from inside
// a parallel region runs all of them inline). With fixed units, slot t runs units t,
// t + threads, ... (one per batch entry). Else:
// help pack B, wait until B is complete, then claim units of C until none is left.
template <class T>
void participate(Phase<T>& ph, std::int64_t begin, std::int64_t end) {
  const MicroKernel<T>& kernel = *ph.kernel;
  Workspace<T>& work = Workspace<T>::local();
  Workspace<T>::ensure(work.a_panel, kernel.mr * kernel.kc);
  Workspace<T>::ensure(work.b_edge, kernel.kc * kernel.nr);
  Workspace<T>::ensure(work.c_tile, kernel.mr * kernel.nr);
  if (ph.strategy->private_b)
    Workspace<T>::ensure(work.private_b, kernel.kc * std::max<std::int64_t>(1, kernel.nc / kernel.nr) * kernel.nr);
  if (ph.strategy->fixed_units) {
    for (std::int64_t slot = begin; slot < end; ++slot)
      for (std::int64_t unit = slot; unit < ph.units; unit += ph.threads) run_unit(ph, work, unit);
    return;
  }
  if (ph.pack_pieces > 0) {
    for (;;) {
      const std::int64_t piece = ph.next_piece.fetch_add(1, std::memory_order_relaxed);
      if (piece >= ph.pack_pieces) break;
      pack_piece(ph, piece);
      ph.pieces_done.fetch_add(1, std::memory_order_release);
    }
    // Every piece is claimed; the ones still missing are being packed by running threads.
    spin_until([&] { return ph.pieces_done.load(std::memory_order_acquire) >= ph.pack_pieces; });
  }
  for (;;) {
    const std::int64_t unit = ph.next_unit.fetch_add(1, std::memory_order_relaxed);
    if (unit >= ph.units) break;
    run_unit(ph, work, unit);
  }
}

// Whether cuts between C's columns at multiples of NR fall on cache-line boundaries: they do
// if C's rows all start on one.
template <class T>
bool columns_cut_on_lines(const Problem<T>& p, const MicroKernel<T>& kernel) {
  const std::int64_t line = 64 / static_cast<std::int64_t>(sizeof(T));
  return p.c_cs == 1 && reinterpret_cast<std::uintptr_t>(p.c) % 64 == 0 && p.c_rs % line == 0 &&
         p.c_batch % line == 0 && kernel.nr % line == 0;
}

// How to cut one batch entry's C into `units` fixed units: along rows when there are enough
// row panels, else along columns, but only where every cut falls on a cache-line boundary
// (`line_aligned`): two threads writing parts of one cache line would pass it back and forth
// on every store (measured: 4x slower than one thread).
inline std::pair<std::int64_t, std::int64_t> fixed_groups(std::int64_t m, std::int64_t n, std::int64_t mr,
                                                          std::int64_t nr, std::int64_t units, bool line_aligned) {
  const std::int64_t row_panels = (m + mr - 1) / mr, col_panels = (n + nr - 1) / nr;
  if (row_panels >= units || !line_aligned) return {std::min(units, row_panels), 1};
  return {1, std::min(units, col_panels)};
}

template <class T>
void run_phase(const Problem<T>& p, const MicroKernel<T>& kernel, const Strategy& s, std::int64_t batch0,
               std::int64_t batches, std::int64_t panel0, std::int64_t panels, T* packed_b) {
  Phase<T> ph;
  ph.p = &p;
  ph.kernel = &kernel;
  ph.strategy = &s;
  ph.batch0 = batch0;
  ph.batches = batches;
  ph.panel0 = panel0;
  ph.panels = panels;
  ph.slices = (p.k + kernel.kc - 1) / kernel.kc;
  if (s.shares_packed_b()) {
    ph.packed_b = packed_b;
    ph.pieces_per_slice = (panels + kPanelsPerPackPiece - 1) / kPanelsPerPackPiece;
    ph.pack_pieces = batches * ph.slices * ph.pieces_per_slice;
  }
  // Units: one per batch entry on one thread; else about kUnitsPerThread per thread, cut
  // along rows first (columns too for short, wide products).
  const std::int64_t mp = (p.m + kernel.mr - 1) / kernel.mr;
  std::int64_t row_groups = 1, col_groups = 1;
  if (s.fixed_units) {
    if (s.private_b) {
      col_groups = std::min(s.threads, panels);  // gemm.cpp checked the cuts fall on cache lines
    } else {
      std::tie(row_groups, col_groups) =
          fixed_groups(p.m, p.n, kernel.mr, kernel.nr, s.threads, columns_cut_on_lines(p, kernel));
    }
  } else if (s.threads > 1) {
    const std::int64_t per_batch = std::max<std::int64_t>(1, (kUnitsPerThread * s.threads + batches - 1) / batches);
    col_groups = std::clamp<std::int64_t>((per_batch + mp - 1) / mp, 1, panels);
    row_groups = std::clamp<std::int64_t>((per_batch + col_groups - 1) / col_groups, 1, mp);
  }
  ph.row_group = (mp + row_groups - 1) / row_groups;
  ph.col_group = (panels + col_groups - 1) / col_groups;
  ph.row_groups = (mp + ph.row_group - 1) / ph.row_group;
  ph.col_groups = (panels + ph.col_group - 1) / ph.col_group;
  ph.units = batches * ph.row_groups * ph.col_groups;

  ph.threads = std::max<std::int64_t>(1, std::min(s.threads, std::max(ph.units, ph.pack_pieces)));
  if (ph.threads == 1) {
    participate(ph, 0, 1);
    return;
  }
  parallel_for(0, ph.threads, 1, [&ph](std::int64_t begin, std::int64_t end) { participate(ph, begin, end); });
}

// Runs the whole problem as phases whose packed B fits kMaxPackedB.
template <class T>
void run_gemm(const Problem<T>& p, const MicroKernel<T>& kernel, const Strategy& s) {
  const std::int64_t total_panels = (p.n + kernel.nr - 1) / kernel.nr;
  const std::int64_t slices = (p.k + kernel.kc - 1) / kernel.kc;
  const std::int64_t panel_size = slices * kernel.kc * kernel.nr;  // one panel, all of k
  std::int64_t batches_per_phase = p.batch, panels_per_phase = total_panels;
  T* packed_b = nullptr;
  if (s.shares_packed_b()) {
    if (panel_size * total_panels > kMaxPackedB) {
      batches_per_phase = 1;
      panels_per_phase = std::max<std::int64_t>(1, kMaxPackedB / panel_size);
    } else {
      batches_per_phase = std::max<std::int64_t>(1, std::min(p.batch, kMaxPackedB / (panel_size * total_panels)));
    }
    packed_b = Workspace<T>::ensure(Workspace<T>::local().packed_b, batches_per_phase * panels_per_phase * panel_size);
  }
  for (std::int64_t batch0 = 0; batch0 < p.batch; batch0 += batches_per_phase)
    for (std::int64_t panel0 = 0; panel0 < total_panels; panel0 += panels_per_phase)
      run_phase(p, kernel, s, batch0, std::min(batches_per_phase, p.batch - batch0), panel0,
                std::min(panels_per_phase, total_panels - panel0), packed_b);
}

}  // namespace driver

using driver::run_gemm;

}  // namespace ember::cpu
