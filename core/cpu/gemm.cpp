// core/cpu/gemm.cpp — the CPU matrix multiply behind mm / bmm / addmm / matmul.
//
// Tutorial §2.4 (matrix multiplication, tensor2d @ tensor2d.T) and every nn.Linear layer.
// Computes, for each batch b,   C_b = alpha * A_b · B_b + beta * C_b   (core/strided_index.h,
// GemmPlan). The operands may have any strides: a transposed operand is just swapped
// strides, and the packing step below reads it directly, so no transpose is ever copied.
//
// The algorithm is the classic Goto/BLIS scheme, written in plain C++:
//
//   for each nc-wide column block of C                    (jc loop)
//     for each kc-deep slice of the k dimension           (pc loop)
//       pack B[pc:pc+kc, jc:jc+nc] into NR-wide panels    (stays in L2/L3 cache)
//       for each mc-tall row block of C                   (ic loop)
//         pack A[ic:ic+mc, pc:pc+kc] into MR-tall panels  (stays in L2 cache)
//         for each MR x NR tile: micro-kernel             (lives in registers)
//
// Packing copies each block once into the exact order the micro-kernel reads, with zeros
// past the matrix edges, so the micro-kernel never deals with strides or partial tiles.
// The micro-kernel is a function pointer chosen by select_micro_kernel(): AVX-512 or
// AVX2 + FMA ones (core/cpu/gemm_kernel_*.cpp) when cpuid reports them, else the portable
// one below; EMBER_GEMM_KERNEL=portable|avx2|avx512 forces one (core/cpu/gemm_kernels.h).
//
// Threads: the independent (batch, row block, column block) pieces of C are shared out
// with ember::parallel_for (core/parallel.h); blocks shrink when there would be fewer
// pieces than threads (choose_blocking). Each piece packs its own panels, so threads share
// nothing but the read-only inputs.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <type_traits>

#include <ember/core/cpu/cpu_kernels.h>
#include <ember/core/cpu/gemm_kernels.h>
#include <ember/core/error.h>
#include <ember/core/parallel.h>

namespace ember::cpu {

namespace {

// Portable cache blocking sizes, in elements (the SIMD kernels carry their own).
constexpr std::int64_t kBlockM = 128;
constexpr std::int64_t kBlockK = 256;
constexpr std::int64_t kBlockN = 1024;

// Below this many multiply-adds a GEMM runs on the calling thread.
constexpr std::int64_t kParallelMinWork = 64 * 64 * 64;

// The portable micro-kernel. MR x NR accumulators are a local array indexed with
// compile-time bounds, so the compiler keeps them in vector registers and vectorises the
// j loop (NR = 8 floats = two SSE or one AVX register per row).
template <class T, int MR, int NR>
void micro_kernel_portable(std::int64_t kc, const T* a_panel, const T* b_panel, T* c, std::int64_t rs_c, T alpha,
                           T beta, bool read_c) {
  T acc[MR][NR] = {};
  for (std::int64_t p = 0; p < kc; ++p) {
    const T* a = a_panel + p * MR;
    const T* b = b_panel + p * NR;
    for (int i = 0; i < MR; ++i) {
      T a_value = a[i];
      for (int j = 0; j < NR; ++j) acc[i][j] += a_value * b[j];
    }
  }
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NR; ++j) {
      T value = alpha * acc[i][j];
      c[i * rs_c + j] = read_c ? static_cast<T>(value + beta * c[i * rs_c + j]) : value;
    }
}

template <class T>
MicroKernel<T> portable_kernel() {
  return {"portable", 4, 8, kBlockM, kBlockK, kBlockN, &micro_kernel_portable<T, 4, 8>};
}

bool cpu_has_avx512() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl");
}
bool cpu_has_avx2() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

// The kernel name to use: EMBER_GEMM_KERNEL if set, else the best the CPU supports. Read
// on every call (one getenv is nothing next to a GEMM) so tests can switch kernels.
std::string chosen_kernel_name() {
  const char* forced = std::getenv("EMBER_GEMM_KERNEL");
  if (forced != nullptr && *forced != '\0') {
    std::string name = forced;
    if (name != "portable" && name != "avx2" && name != "avx512")
      throw ValueError("EMBER_GEMM_KERNEL must be portable, avx2 or avx512, got '" + name + "'");
    if (!gemm_kernel_available(name))
      throw ValueError("EMBER_GEMM_KERNEL=" + name + " but this CPU does not support it");
    return name;
  }
  if (cpu_has_avx512()) return "avx512";
  if (cpu_has_avx2()) return "avx2";
  return "portable";
}

// The one place that decides which micro-kernel runs. Integer dtypes always use the
// portable kernel (the SIMD ones are floating point only).
template <class T>
MicroKernel<T> select_micro_kernel() {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    const std::string name = chosen_kernel_name();
    if constexpr (std::is_same_v<T, float>) {
      if (name == "avx512") return avx512_kernel_f32();
      if (name == "avx2") return avx2_kernel_f32();
    } else {
      if (name == "avx512") return avx512_kernel_f64();
      if (name == "avx2") return avx2_kernel_f64();
    }
  }
  return portable_kernel<T>();
}

// A 64-byte-aligned scratch buffer (one cache line, one zmm), left uninitialised: packing
// writes every element before the kernel reads it.
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

// One operand's geometry: element (i, j) is at data[i * row_stride + j * col_stride].
template <class T>
struct MatrixRef {
  const T* data;
  std::int64_t row_stride, col_stride;
  T at(std::int64_t i, std::int64_t j) const { return data[i * row_stride + j * col_stride]; }
};

// Packs A[row0 : row0+rows, col0 : col0+depth] into ceil(rows / mr) panels of mr rows;
// inside a panel, the mr values of column p are adjacent. Rows past the edge become 0.
template <class T>
void pack_a(const MatrixRef<T>& a, std::int64_t row0, std::int64_t rows, std::int64_t col0, std::int64_t depth,
            std::int64_t mr, T* out) {
  for (std::int64_t panel = 0; panel < rows; panel += mr) {
    std::int64_t valid = std::min(mr, rows - panel);
    if (a.col_stride == 1) {
      // Row-major A: walk each row contiguously (reads stream, writes hop by mr).
      for (std::int64_t i = 0; i < valid; ++i) {
        const T* row = a.data + (row0 + panel + i) * a.row_stride + col0;
        for (std::int64_t p = 0; p < depth; ++p) out[p * mr + i] = row[p];
      }
      for (std::int64_t i = valid; i < mr; ++i)
        for (std::int64_t p = 0; p < depth; ++p) out[p * mr + i] = T(0);
      out += depth * mr;
      continue;
    }
    if (a.row_stride == 1) {
      // Column-major (transposed) A: the mr values of one column are adjacent, a plain copy.
      for (std::int64_t p = 0; p < depth; ++p) {
        const T* column = a.data + row0 + panel + (col0 + p) * a.col_stride;
        std::copy(column, column + valid, out);
        std::fill(out + valid, out + mr, T(0));
        out += mr;
      }
      continue;
    }
    for (std::int64_t p = 0; p < depth; ++p) {
      for (std::int64_t i = 0; i < valid; ++i) out[i] = a.at(row0 + panel + i, col0 + p);
      for (std::int64_t i = valid; i < mr; ++i) out[i] = T(0);
      out += mr;
    }
  }
}

// Packs B[row0 : row0+depth, col0 : col0+cols] into ceil(cols / nr) panels of nr columns;
// inside a panel, the nr values of row p are adjacent. Columns past the edge become 0.
template <class T>
void pack_b(const MatrixRef<T>& b, std::int64_t row0, std::int64_t depth, std::int64_t col0, std::int64_t cols,
            std::int64_t nr, T* out) {
  for (std::int64_t panel = 0; panel < cols; panel += nr) {
    std::int64_t valid = std::min(nr, cols - panel);
    if (b.row_stride == 1 && b.col_stride != 1) {
      // Transposed B (column-major): walk each column contiguously.
      for (std::int64_t j = 0; j < valid; ++j) {
        const T* column = b.data + row0 + (col0 + panel + j) * b.col_stride;
        for (std::int64_t p = 0; p < depth; ++p) out[p * nr + j] = column[p];
      }
      for (std::int64_t j = valid; j < nr; ++j)
        for (std::int64_t p = 0; p < depth; ++p) out[p * nr + j] = T(0);
      out += depth * nr;
      continue;
    }
    if (b.col_stride == 1) {
      // Row-major B: the nr values of one row are adjacent, a plain (vectorised) copy.
      for (std::int64_t p = 0; p < depth; ++p) {
        const T* row = b.data + (row0 + p) * b.row_stride + col0 + panel;
        std::copy(row, row + valid, out);
        std::fill(out + valid, out + nr, T(0));
        out += nr;
      }
      continue;
    }
    for (std::int64_t p = 0; p < depth; ++p) {
      for (std::int64_t j = 0; j < valid; ++j) out[j] = b.at(row0 + p, col0 + panel + j);
      for (std::int64_t j = valid; j < nr; ++j) out[j] = T(0);
      out += nr;
    }
  }
}

// C[i, j] = alpha * tile[i, j] + beta * C[i, j] for the valid rows x cols of a tile.
// beta == 0 must not read C: it may be uninitialised memory holding NaNs.
template <class T>
void store_tile(const T* tile, std::int64_t nr, std::int64_t rows, std::int64_t cols, T* c,
                std::int64_t row_stride, std::int64_t col_stride, T alpha, T beta, bool read_c) {
  for (std::int64_t i = 0; i < rows; ++i) {
    for (std::int64_t j = 0; j < cols; ++j) {
      T& out = c[i * row_stride + j * col_stride];
      T value = alpha * tile[i * nr + j];
      out = read_c ? static_cast<T>(value + beta * out) : value;
    }
  }
}

// k == 0: the product is all zeros, so C = beta * C (and C = 0 when beta == 0).
template <class T>
void scale_c(const GemmPlan& plan, T beta) {
  T* c_base = static_cast<T*>(plan.c);
  for (std::int64_t b = 0; b < plan.batch; ++b) {
    for (std::int64_t i = 0; i < plan.m; ++i) {
      for (std::int64_t j = 0; j < plan.n; ++j) {
        T& out = c_base[b * plan.batch_stride_c + i * plan.row_stride_c + j * plan.col_stride_c];
        out = plan.beta == 0.0 ? T(0) : static_cast<T>(beta * out);
      }
    }
  }
}

// Per-thread scratch: packed panels plus one tile for partial edges / strided C. Each
// thread keeps its buffers between calls (thread_local, grown when a larger GEMM needs
// more): a fresh 2 MiB packing buffer per call went to mmap and page faults, which cost
// more than a whole 128 x 128 x 10 product (docs/performance.md).
template <class T>
struct Workspace {
  std::unique_ptr<AlignedBuffer<T>> packed_a, packed_b, tile;

  static void ensure(std::unique_ptr<AlignedBuffer<T>>& buffer, std::int64_t size) {
    if (!buffer || buffer->count < size) buffer = std::make_unique<AlignedBuffer<T>>(size);
  }
  static Workspace& for_this_thread(std::int64_t a_size, std::int64_t b_size, std::int64_t tile_size) {
    thread_local Workspace workspace;
    ensure(workspace.packed_a, a_size);
    ensure(workspace.packed_b, b_size);
    ensure(workspace.tile, tile_size);
    return workspace;
  }
};

// One piece of C: rows [row0, row0 + rows) x columns [col0, col0 + cols) of one batch. B is
// packed once per k slice and reused by every mc-row block of the piece.
template <class T>
void gemm_piece(const GemmPlan& plan, const MicroKernel<T>& kernel, std::int64_t batch, std::int64_t row0,
                std::int64_t rows, std::int64_t col0, std::int64_t cols, Workspace<T>& work) {
  const T* a_base = static_cast<const T*>(plan.a) + batch * plan.batch_stride_a;
  const T* b_base = static_cast<const T*>(plan.b) + batch * plan.batch_stride_b;
  T* c_base = static_cast<T*>(plan.c) + batch * plan.batch_stride_c;
  MatrixRef<T> a{a_base, plan.row_stride_a, plan.col_stride_a};
  MatrixRef<T> b{b_base, plan.row_stride_b, plan.col_stride_b};
  const auto alpha = static_cast<T>(plan.alpha);
  const auto beta = static_cast<T>(plan.beta);
  const std::int64_t mr = kernel.mr, nr = kernel.nr;

  for (std::int64_t depth0 = 0; depth0 < plan.k; depth0 += kernel.kc) {
    const std::int64_t depth = std::min(kernel.kc, plan.k - depth0);
    pack_b(b, depth0, depth, col0, cols, nr, work.packed_b->data);
    // The first k slice applies the caller's beta; later slices add onto what is there.
    const bool first_slice = depth0 == 0;
    const bool read_c = !first_slice || plan.beta != 0.0;
    const T slice_beta = first_slice ? beta : T(1);
    for (std::int64_t block_row = 0; block_row < rows; block_row += kernel.mc) {
      const std::int64_t block_rows = std::min(kernel.mc, rows - block_row);
      pack_a(a, row0 + block_row, block_rows, depth0, depth, mr, work.packed_a->data);
      for (std::int64_t j = 0; j < cols; j += nr) {
        const T* b_panel = work.packed_b->data + (j / nr) * nr * depth;
        for (std::int64_t i = 0; i < block_rows; i += mr) {
          const T* a_panel = work.packed_a->data + (i / mr) * mr * depth;
          T* c_tile = c_base + (row0 + block_row + i) * plan.row_stride_c + (col0 + j) * plan.col_stride_c;
          const std::int64_t tile_rows = std::min(mr, block_rows - i), tile_cols = std::min(nr, cols - j);
          if (tile_rows == mr && tile_cols == nr && plan.col_stride_c == 1) {
            // Fast path: the kernel updates C in place.
            kernel.run(depth, a_panel, b_panel, c_tile, plan.row_stride_c, alpha, slice_beta, read_c);
          } else {
            // Edge or strided C: compute the full padded tile aside, then store the valid part.
            kernel.run(depth, a_panel, b_panel, work.tile->data, nr, T(1), T(0), false);
            store_tile(work.tile->data, nr, tile_rows, tile_cols, c_tile, plan.row_stride_c, plan.col_stride_c,
                       alpha, slice_beta, read_c);
          }
        }
      }
    }
  }
}

template <class T>
void gemm_typed(const GemmPlan& plan) {
  if (plan.batch == 0 || plan.m == 0 || plan.n == 0) return;  // nothing to write
  if (plan.k == 0) {
    scale_c<T>(plan, static_cast<T>(plan.beta));
    return;
  }
  const MicroKernel<T> kernel = select_micro_kernel<T>();
  auto round_up = [](std::int64_t value, std::int64_t multiple) { return (value + multiple - 1) / multiple * multiple; };
  // A narrow C (the 10-class layer's 128 x 10) wastes most of each MR x NR tile when its
  // few columns sit on the wide NR axis. C^T = B^T · A^T is the same product with the
  // roles swapped (only strides change), so run that when it pads at least a quarter less.
  // The test is strict and symmetric, so the swapped plan never swaps back.
  const std::int64_t padded = round_up(plan.m, kernel.mr) * round_up(plan.n, kernel.nr);
  const std::int64_t padded_swapped = round_up(plan.n, kernel.mr) * round_up(plan.m, kernel.nr);
  if (4 * padded_swapped <= 3 * padded) {
    GemmPlan swapped = plan;
    swapped.m = plan.n;
    swapped.n = plan.m;
    swapped.a = plan.b;
    swapped.batch_stride_a = plan.batch_stride_b;
    swapped.row_stride_a = plan.col_stride_b;
    swapped.col_stride_a = plan.row_stride_b;
    swapped.b = plan.a;
    swapped.batch_stride_b = plan.batch_stride_a;
    swapped.row_stride_b = plan.col_stride_a;
    swapped.col_stride_b = plan.row_stride_a;
    swapped.row_stride_c = plan.col_stride_c;
    swapped.col_stride_c = plan.row_stride_c;
    gemm_typed<T>(swapped);
    return;
  }
  // Small products stay on this thread; large ones are cut into enough pieces for all.
  const std::int64_t work = plan.batch * plan.m * plan.n * plan.k;
  const std::int64_t threads = work >= kParallelMinWork ? get_num_threads() : 1;
  // Pieces: batches x nc-wide column blocks x row chunks. Rows are split (in whole tiles)
  // only when batches x column blocks leave threads idle. kc never changes, so the
  // summation order — and the result, bit for bit — does not depend on the thread count.
  const std::int64_t nc = std::min(kernel.nc, round_up(plan.n, kernel.nr));
  const std::int64_t col_blocks = (plan.n + nc - 1) / nc;
  std::int64_t row_chunks = 1;
  if (plan.batch * col_blocks < threads) row_chunks = (threads + plan.batch * col_blocks - 1) / (plan.batch * col_blocks);
  const std::int64_t chunk_rows = round_up((plan.m + row_chunks - 1) / row_chunks, kernel.mr);
  row_chunks = (plan.m + chunk_rows - 1) / chunk_rows;
  const std::int64_t pieces = plan.batch * col_blocks * row_chunks;

  const std::int64_t block_k = std::min(kernel.kc, plan.k);
  const std::int64_t packed_a_size = round_up(std::min(kernel.mc, chunk_rows), kernel.mr) * block_k;
  const std::int64_t packed_b_size = nc * block_k;
  const std::int64_t grain = threads > 1 ? 1 : pieces;  // a grain as large as the range runs inline
  parallel_for(0, pieces, grain, [&](std::int64_t begin, std::int64_t end) {
    Workspace<T>& workspace = Workspace<T>::for_this_thread(packed_a_size, packed_b_size, kernel.mr * kernel.nr);
    for (std::int64_t piece = begin; piece < end; ++piece) {
      const std::int64_t chunk = piece % row_chunks;
      const std::int64_t col_block = (piece / row_chunks) % col_blocks;
      const std::int64_t batch = piece / (row_chunks * col_blocks);
      const std::int64_t row0 = chunk * chunk_rows, col0 = col_block * nc;
      gemm_piece<T>(plan, kernel, batch, row0, std::min(chunk_rows, plan.m - row0), col0, std::min(nc, plan.n - col0),
                    workspace);
    }
  });
}

}  // namespace

bool gemm_kernel_available(const std::string& name) {
  if (name == "portable") return true;
  if (name == "avx2") return cpu_has_avx2();
  if (name == "avx512") return cpu_has_avx512();
  return false;
}

std::string active_gemm_kernel_name() { return chosen_kernel_name(); }

void gemm(const GemmPlan& plan) {
  switch (plan.dtype) {
    case DType::Float32: gemm_typed<float>(plan); break;
    case DType::Float64: gemm_typed<double>(plan); break;
    case DType::Int64: gemm_typed<std::int64_t>(plan); break;
    case DType::Int32: gemm_typed<std::int32_t>(plan); break;
    case DType::UInt8: gemm_typed<std::uint8_t>(plan); break;
    case DType::Bool:
      // native:: rejects bool before it gets here (PyTorch has no bool matmul either).
      throw DTypeError("\"addmm_impl_cpu_\" not implemented for 'Bool'");
  }
}

}  // namespace ember::cpu
