// core/cpu/gemm.cpp — the CPU matrix multiply behind mm / bmm / addmm / matmul: the plan.
//
// Tutorial §2.4 (matrix multiplication, tensor2d @ tensor2d.T) and every nn.Linear layer.
// Computes, for each batch b,   C_b = alpha * A_b · B_b + beta * C_b   (core/strided_index.h,
// GemmPlan). The operands may have any strides: a transposed operand is just swapped
// strides, which the packing and the kernels read directly, so no transpose is ever copied.
//
// This file decides *how* one GEMM runs; core/cpu/gemm_driver.h runs it:
//   1. the micro-kernel: AVX-512 or AVX2 + FMA (core/cpu/gemm_kernel_*.cpp) when cpuid reports
//      them, else the portable one below; EMBER_GEMM_KERNEL=portable|avx2|avx512 (read at the
//      first GEMM) forces one. bfloat16 products: gemm_kernel_bf16_avx512.cpp (vdpbf16ps, or
//      AMX tiles where the CPU has them);
//   2. the orientation: C = A·B or, with the roles swapped, Cᵀ = Bᵀ·Aᵀ (only strides change).
//      The kernel writes rows of C with unit stride, so a column-major C is swapped, and a
//      narrow product is swapped when an estimate of its cost (padded vector lanes, packing
//      copies, strided stores) says so;
//   3. what to pack: a panel is packed when it is reused often enough to repay the copy (large
//      products), and read in place when it is used once or twice (thin products);
//   4. threads: only when the product is large enough to repay handing half of it to a
//      second core; small products give each thread a fixed part, mid-sized ones whose B is
//      packed give each thread its own columns to pack and multiply, large ones let the
//      threads claim parts as they go (core/cpu/gemm_driver.h).
// None of these choices depends on the thread count, and neither does the order in which
// each element sums over k (fixed kc slices, one thread per element), so results are
// bit-identical for any number of threads.
#include <cpuid.h>

#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include <ember/core/cpu/cpu_kernels.h>
#include <ember/core/cpu/gemm_driver.h>
#include <ember/core/cpu/gemm_kernels.h>
#include <ember/core/element_math.h>
#include <ember/core/error.h>
#include <ember/core/parallel.h>

namespace ember::cpu {

namespace {

// Below this many multiply-adds a GEMM runs on the calling thread. Handing half of a GEMM to
// an awake pool thread costs about a microsecond here (its start-up is a chain of cache
// misses between cores, ~80 ns each on this machine; docs/performance.md), and a sleeping
// one costs the caller only the wake-up call, since the caller takes back what nobody started
// (core/parallel.cpp). Measured: 64 x 64 x 64 (4 us on one core) is where two threads
// start to win; 128 x 128 x 10 (3.2 us, bound by writing its 64 KiB C) does not gain.
constexpr std::int64_t kParallelMinWork = 64 * 64 * 64;
// Below this many multiply-adds the threads take fixed units (core/cpu/gemm_driver.h):
// measured as fast as claiming, or faster, from 64^3 up to 128 x 256 x 128.
constexpr std::int64_t kFixedUnitsMaxWork = 128 * 128 * 384;

// Below this many multiply-adds a product whose B is packed gives each thread its own columns
// and lets it pack their B panels itself: measured faster from 256^3 and the MLP's
// 128 x 784 x 256 products, as fast at 512^3 (docs/performance.md, "B packed per thread").
constexpr std::int64_t kPrivateBMaxWork = std::int64_t{512} * 512 * 512;

// The portable micro-kernel, for every dtype and CPU. A 4 x 8 tile; the accumulators are a
// local array with compile-time bounds so the compiler keeps them in registers.
constexpr std::int64_t kPortableMR = 4, kPortableNR = 8;

template <class T>
T combine(T alpha, T acc, T beta, T old, bool read_c) {
  const T value = math::mul(alpha, acc);
  if (!read_c) return value;
  // Floating point: one rounding for beta * C + value, exactly like the SIMD kernels' FMA.
  if constexpr (std::is_floating_point_v<T>) return std::fma(beta, old, value);
  return math::add(value, math::mul(beta, old));  // integers wrap modulo 2^N, as PyTorch's matmul
}

template <class T>
void portable_tile(const TileArgs<T>& t) {
  constexpr int MR = kPortableMR, NR = kPortableNR;
  const bool full = t.rows == MR;
  for (std::int64_t panel = 0; panel < t.panels; ++panel) {  // tiles side by side (gemm_kernels.h)
    const T* b_panel = t.b + panel * t.b_panel_step;
    T* c_tile = t.c + panel * NR;
    T acc[MR][NR] = {};
    for (std::int64_t p = 0; p < t.k; ++p) {
      const T* b = b_panel + p * t.b_k_step;
      for (int i = 0; i < MR; ++i) {
        if (!full && i >= t.rows) break;  // rows past the edge may not be readable (unpacked A)
        const T a_value = t.a[i * t.a_row_step + p * t.a_k_step];
        for (int j = 0; j < NR; ++j) acc[i][j] = math::add(acc[i][j], math::mul(a_value, b[j]));
      }
    }
    for (std::int64_t i = 0; i < t.rows; ++i)
      for (std::int64_t j = 0; j < t.cols; ++j) {
        T& out = c_tile[i * t.c_row_stride + j];
        out = combine(t.alpha, acc[i][j], t.beta, t.read_c ? out : T(0), t.read_c);
      }
  }
}

template <class T>
MicroKernel<T> portable_kernel() {
  MicroKernel<T> kernel;
  kernel.mr = kPortableMR;
  kernel.nr = kPortableNR;
  kernel.kc = 256;
  kernel.nc = 1024;
  kernel.tile_a_kstep = &portable_tile<T>;
  kernel.tile_a_rows = &portable_tile<T>;
  return kernel;
}

// cpuid is asked once: in a virtual machine each cpuid instruction traps to the hypervisor.
struct CpuFeatures {
  bool avx2, avx512, avx512_bw, avx512_bf16, amx_bf16;
};

// cpuid leaf 7: EDX bit 24 is AMX-TILE, bit 22 AMX-BF16. (Asked directly: clang 14's
// __builtin_cpu_supports has no name for them.)
bool cpu_reports_amx_bf16() {
  unsigned int eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) == 0) return false;
  return ((edx >> 24) & 1U) != 0 && ((edx >> 22) & 1U) != 0;
}

// AMX's tile registers are state the Linux kernel saves only for a process that asked for it
// (arch_prctl ARCH_REQ_XCOMP_PERM for XFEATURE_XTILEDATA, Linux 5.16+); without the grant the
// first tile instruction faults. Asked once; false where the call fails (an older kernel,
// valgrind, another OS).
bool amx_tile_state_granted() {
#if defined(__linux__) && defined(SYS_arch_prctl)
  constexpr long kArchRequestComponentPermission = 0x1023;  // ARCH_REQ_XCOMP_PERM
  constexpr long kTileDataComponent = 18;                   // XFEATURE_XTILEDATA
  return syscall(SYS_arch_prctl, kArchRequestComponentPermission, kTileDataComponent) == 0;
#else
  return false;
#endif
}
const CpuFeatures& cpu_features() {
  static const CpuFeatures features = [] {
    __builtin_cpu_init();
    return CpuFeatures{__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"),
                       __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl"),
                       __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
                           __builtin_cpu_supports("avx512bw"),
                       __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
                           __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512bf16"),
                       cpu_reports_amx_bf16() && amx_tile_state_granted()};
  }();
  return features;
}

// EMBER_GEMM_KERNEL if set, else the best the CPU supports.
VectorIsa isa_from_environment() {
  const char* forced = std::getenv("EMBER_GEMM_KERNEL");
  if (forced != nullptr && *forced != '\0') {
    VectorIsa isa;
    if (std::strcmp(forced, "portable") == 0) isa = VectorIsa::kPortable;
    else if (std::strcmp(forced, "avx2") == 0) isa = VectorIsa::kAvx2;
    else if (std::strcmp(forced, "avx512") == 0) isa = VectorIsa::kAvx512;
    else throw ValueError("EMBER_GEMM_KERNEL must be portable, avx2 or avx512, got '" + std::string(forced) + "'");
    if (!gemm_kernel_available(forced))
      throw ValueError("EMBER_GEMM_KERNEL=" + std::string(forced) + " but this CPU does not support it");
    return isa;
  }
  if (cpu_features().avx512) return VectorIsa::kAvx512;
  if (cpu_features().avx2) return VectorIsa::kAvx2;
  return VectorIsa::kPortable;
}

// The choice, read from the environment at the first GEMM and kept (a getenv scans the
// whole environment: a tenth of a tiny GEMM's set-up); -1 until then, and after a failed
// read, so a bad value is reported on every call. reload_gemm_kernel_choice() forgets it.
constexpr int kIsaUnknown = -1;
std::atomic<int> cached_isa{kIsaUnknown};
std::atomic<int> cached_amx{kIsaUnknown};  // EMBER_AMX: -1 unread, else 0 (off) or 1 (allowed)

VectorIsa chosen_isa() {
  const int cached = cached_isa.load(std::memory_order_relaxed);
  if (cached != kIsaUnknown) [[likely]] return static_cast<VectorIsa>(cached);
  const VectorIsa isa = isa_from_environment();  // may throw: stays unknown
  cached_isa.store(static_cast<int>(isa), std::memory_order_relaxed);
  return isa;
}

// The one place that decides which micro-kernel runs. Integer dtypes always use the
// portable kernel (the SIMD ones are floating point only).
template <class T>
MicroKernel<T> select_micro_kernel() {
  const VectorIsa isa = chosen_isa();
  if constexpr (std::is_same_v<T, float>) {
    if (isa == VectorIsa::kAvx512) return avx512_kernel_f32();
    if (isa == VectorIsa::kAvx2) return avx2_kernel_f32();
  } else if constexpr (std::is_same_v<T, double>) {
    if (isa == VectorIsa::kAvx512) return avx512_kernel_f64();
    if (isa == VectorIsa::kAvx2) return avx2_kernel_f64();
  }
  return portable_kernel<T>();
}

// A dimension of size 1 has a meaningless stride; give it the unit stride that lets the
// kernels read or write in place (a matrix-vector product then needs no packing at all).
template <class T>
void normalise_unit_dims(Problem<T>& p) {
  if (p.m == 1) {
    if (p.a_cs != 1) p.a_rs = 1;
  }
  if (p.k == 1) {
    if (p.a_rs != 1) p.a_cs = 1;
  }
  if (p.n == 1) {
    p.c_cs = 1;
    if (p.b_rs != 1) p.b_cs = 1;
  }
}

template <class T>
Problem<T> transposed(const Problem<T>& p) {
  Problem<T> s = p;
  s.m = p.n;
  s.n = p.m;
  s.a = p.b;
  s.a_batch = p.b_batch;
  s.a_rs = p.b_cs;
  s.a_cs = p.b_rs;
  s.b = p.a;
  s.b_batch = p.a_batch;
  s.b_rs = p.a_cs;
  s.b_cs = p.a_rs;
  s.c_rs = p.c_cs;
  s.c_cs = p.c_rs;
  return s;
}

// What to pack, for a problem in kernel orientation. The kernels can read an operand in
// place when it has a unit stride (B: along its columns; A: either way), so packing is a
// choice, made by measurement (docs/performance.md):
//   * an A panel meets every B panel of its rows (n / NR of them). A column-major A packs by
//     copying, which repays itself beyond four meetings (n > 4 NR: wider than the MLP's
//     128-wide layers). A row-major A packs by transposing, several times the copy's cost,
//     and is read in place up to 32 meetings (the Linear forward's X, the convolution's
//     weight gradient) — unless its rows lie a multiple of 4 KiB apart: the MR rows read side
//     by side would then share the L1 cache's sets and evict each other (a square 1024
//     product measured slower in place);
//   * a row-major B read in place streams its rows with the matrix's own stride. Up to about
//     a dozen A panels (m <= 12 MR: the MLP's batch of 128) that is faster than copying B
//     first; beyond, the contiguous packed panels win.
template <class T>
Strategy choose_packing(const Problem<T>& p, const MicroKernel<T>& kernel) {
  Strategy s;
  const bool row_major_a = p.a_cs == 1 && p.a_rs != 1;
  const bool rows_share_sets = (p.a_rs * static_cast<std::int64_t>(sizeof(T))) % 4096 == 0;
  const std::int64_t meetings = row_major_a && !rows_share_sets ? 32 : 4;
  s.pack_a = !(p.a_rs == 1 || p.a_cs == 1) || p.n > meetings * kernel.nr;
  s.pack_b = p.b_cs != 1 || p.m > 12 * kernel.mr;
  return s;
}

// A rough cycle estimate of running `p` (one batch entry), used only to pick the orientation:
// FMAs over whole vectors (edge tiles are exact in rows, padded in lanes), plus the copies.
template <class T>
double estimated_cycles(const Problem<T>& p, const MicroKernel<T>& kernel, bool vector_transpose) {
  // Rounding up is done in integers: this file is built for any x86-64, where std::ceil is a
  // libm call, and this estimate runs twice per GEMM (a tiny product's set-up counts).
  auto ceil_div = [](std::int64_t value, std::int64_t step) { return static_cast<double>((value + step - 1) / step); };
  const Strategy s = choose_packing(p, kernel);
  const std::int64_t lanes = kernel.nr / 2;  // the SIMD tiles are 2 vectors wide
  double cycles = static_cast<double>(p.m) * static_cast<double>(p.k) * ceil_div(p.n, lanes) / 2;
  const double transpose_cost = vector_transpose ? 0.3 : 1.0, copy_cost = 0.1;
  const double a_elements = static_cast<double>(p.m) * static_cast<double>(p.k) * ceil_div(p.n, 1024);
  const double b_elements = static_cast<double>(p.k) * static_cast<double>(p.n);
  if (s.pack_a) cycles += a_elements * (p.a_rs == 1 ? copy_cost : transpose_cost);
  if (s.pack_b) cycles += b_elements * (p.b_cs == 1 ? copy_cost : transpose_cost);
  // A strided C is stored element by element, once per kc slice (each slice adds onto C),
  // through a scalar fma (a libm call here: this file is built for any x86-64): measured at
  // about 6 cycles per element and slice, it decided the MLP's forward shape (docs/performance.md).
  if (p.c_cs != 1) {
    const double slices = ceil_div(p.k, kernel.kc);
    cycles += 6.0 * slices * static_cast<double>(p.m) * static_cast<double>(p.n);
  }
  return cycles;
}

// k == 0: the product is all zeros, so C = beta * C (and C = 0 when beta == 0).
template <class T>
void scale_c(const Problem<T>& p) {
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t i = 0; i < p.m; ++i)
      for (std::int64_t j = 0; j < p.n; ++j) {
        T& out = p.c[b * p.c_batch + i * p.c_rs + j * p.c_cs];
        out = p.beta_zero ? T(0) : static_cast<T>(p.beta * out);
      }
}

template <class T>
void gemm_typed(const GemmPlan& plan) {
  if (plan.batch == 0 || plan.m == 0 || plan.n == 0) return;  // nothing to write
  Problem<T> p;
  p.batch = plan.batch;
  p.m = plan.m;
  p.n = plan.n;
  p.k = plan.k;
  p.a = static_cast<const T*>(plan.a);
  p.a_batch = plan.batch_stride_a;
  p.a_rs = plan.row_stride_a;
  p.a_cs = plan.col_stride_a;
  p.b = static_cast<const T*>(plan.b);
  p.b_batch = plan.batch_stride_b;
  p.b_rs = plan.row_stride_b;
  p.b_cs = plan.col_stride_b;
  p.c = static_cast<T*>(plan.c);
  p.c_batch = plan.batch_stride_c;
  p.c_rs = plan.row_stride_c;
  p.c_cs = plan.col_stride_c;
  p.alpha = static_cast<T>(plan.alpha);
  p.beta = static_cast<T>(plan.beta);
  p.beta_zero = plan.beta == 0.0;
  if (p.k == 0) {
    scale_c(p);
    return;
  }
  const MicroKernel<T> kernel = select_micro_kernel<T>();
  normalise_unit_dims(p);
  // Orientation: the cheaper of C = A·B and Cᵀ = Bᵀ·Aᵀ (ties keep A·B). The estimate is
  // symmetric in the two, so the decision never depends on which one we started from.
  Problem<T> swapped = transposed(p);
  normalise_unit_dims(swapped);
  const bool vector_transpose = std::is_same_v<T, float> && kernel.pack_b != nullptr;
  if (estimated_cycles(swapped, kernel, vector_transpose) < estimated_cycles(p, kernel, vector_transpose)) p = swapped;

  Strategy strategy = choose_packing(p, kernel);
  const std::int64_t work = p.batch * p.m * p.n * p.k;
  strategy.threads = work >= kParallelMinWork ? get_num_threads() : 1;
  strategy.fixed_units = strategy.threads > 1 && !strategy.pack_b && work < kFixedUnitsMaxWork;
  // A mid-sized product whose B is packed: each thread packs only the B panels of its own
  // columns (one fixed unit per thread) instead of all threads packing one shared copy and
  // waiting for it to be complete (docs/performance.md, "B packed per thread"). Each thread
  // then reads all of A, so only where C is no taller than wide (A no larger than B, per
  // unit of k): the GPT's 2048-row products are slower so.
  const std::int64_t b_panels = (p.n + kernel.nr - 1) / kernel.nr;
  strategy.private_b = strategy.threads > 1 && strategy.pack_b && p.batch == 1 && p.m <= p.n &&
                       work < kPrivateBMaxWork && b_panels >= 2 * strategy.threads &&
                       driver::columns_cut_on_lines(p, kernel);
  if (strategy.private_b) strategy.fixed_units = true;
  run_gemm(p, kernel, strategy);
}

}  // namespace

bool gemm_kernel_available(const std::string& name) {
  if (name == "portable") return true;
  if (name == "avx2") return cpu_features().avx2;
  if (name == "avx512") return cpu_features().avx512;
  return false;
}

bool bfloat16_gemm_usable() { return cpu_features().avx512_bf16 && chosen_isa() == VectorIsa::kAvx512; }

// The capability core/linalg.cpp asks before a 16-bit GEMM (core/backend.h).
bool gemm_reads_16_bit(DType dtype) { return dtype == DType::BFloat16 && bfloat16_gemm_usable(); }
EMBER_REGISTER_KERNEL(::ember::gemm_reads_16_bit_kernel, CPU, gemm_reads_16_bit);

void reload_gemm_kernel_choice() {
  cached_isa.store(kIsaUnknown, std::memory_order_relaxed);
  cached_amx.store(kIsaUnknown, std::memory_order_relaxed);
}

bool amx_bfloat16_usable() {
  int allowed = cached_amx.load(std::memory_order_relaxed);
  if (allowed == kIsaUnknown) {
    const char* text = std::getenv("EMBER_AMX");
    const std::string value = text == nullptr ? "" : text;
    if (value.empty() || value == "1") allowed = 1;
    else if (value == "0") allowed = 0;
    else throw ValueError("EMBER_AMX must be 0 or 1 (or unset), got '" + value + "'");
    cached_amx.store(allowed, std::memory_order_relaxed);
  }
  return allowed == 1 && cpu_features().amx_bf16 && bfloat16_gemm_usable();
}

VectorIsa active_vector_isa() { return chosen_isa(); }
bool cpu_has_avx512bw() { return cpu_features().avx512_bw; }

std::string active_gemm_kernel_name() {
  switch (chosen_isa()) {
    case VectorIsa::kAvx512: return "avx512";
    case VectorIsa::kAvx2: return "avx2";
    case VectorIsa::kPortable: break;
  }
  return "portable";
}

void gemm(const GemmPlan& plan) {
  switch (plan.dtype) {
    case DType::Float32: gemm_typed<float>(plan); break;
    case DType::Float64: gemm_typed<double>(plan); break;
    case DType::Int64: gemm_typed<std::int64_t>(plan); break;
    case DType::Int32: gemm_typed<std::int32_t>(plan); break;
    case DType::UInt8: gemm_typed<std::uint8_t>(plan); break;
    case DType::BFloat16:
      // Only when gemm_reads_16_bit said yes; otherwise core/linalg.cpp widened to float32.
      if (!bfloat16_gemm_usable()) detail::throw_dtype_not_implemented(plan.dtype);
      gemm_bfloat16_avx512(plan);
      break;
    case DType::Bool:
      // native:: rejects bool before it gets here (PyTorch has no bool matmul either).
      throw DTypeError("\"addmm_impl_cpu_\" not implemented for 'Bool'");
    default: detail::throw_dtype_not_implemented(plan.dtype);  // core/linalg.cpp widens float16
  }
}

EMBER_REGISTER_KERNEL(::ember::gemm_kernel, CPU, gemm);

// addmm (nn.Linear's forward): C starts as the broadcast bias, then the GEMM computes
// alpha·A·B + beta·C over it, exactly what a copy of the bias followed by gemm_kernel gives.
// The copy is a few memcpys (one per row of C, or log2 of the rows for one bias row over a
// dense C), not a general strided copy with its plan and output tensor, whose set-up is a
// large share of a small product (docs/performance.md, "the toy step's fixed costs"). The
// product itself goes through gemm_kernel's dispatch, so EMBER_KERNELS=reference still runs
// the reference loops.
void addmm(const GemmPlan& plan) {
  const auto element = static_cast<std::int64_t>(itemsize(plan.dtype));
  const bool whole_rows = plan.col_stride_bias == 1 && plan.col_stride_c == 1;
  // An empty C has nothing to copy, and an empty bias may have no storage at all: stepping its
  // null pointer by a stride is undefined behaviour even when nothing is read (the API fuzzer).
  const bool empty_c = plan.batch == 0 || plan.m == 0 || plan.n == 0;
  for (std::int64_t batch = 0; !empty_c && batch < plan.batch; ++batch) {
    const auto* from = static_cast<const std::byte*>(plan.bias) + batch * plan.batch_stride_bias * element;
    auto* to = static_cast<std::byte*>(plan.c) + batch * plan.batch_stride_c * element;
    if (whole_rows && plan.row_stride_bias == 0 && plan.row_stride_c == plan.n) {
      // One bias row over a dense C: copy it once, then double the rows filled (1, 2, 4, ...):
      // log2(m) copies instead of m (a batch of 32 rows: 6 instead of 32).
      const auto row_bytes = static_cast<std::size_t>(plan.n * element);
      std::memcpy(to, from, row_bytes);
      for (std::int64_t filled = 1; filled < plan.m; filled *= 2) {
        const std::int64_t rows = std::min(filled, plan.m - filled);
        std::memcpy(to + static_cast<std::size_t>(filled) * row_bytes, to, static_cast<std::size_t>(rows) * row_bytes);
      }
      continue;
    }
    for (std::int64_t i = 0; i < plan.m; ++i, from += plan.row_stride_bias * element, to += plan.row_stride_c * element) {
      if (whole_rows) {
        std::memcpy(to, from, static_cast<std::size_t>(plan.n * element));
        continue;
      }
      for (std::int64_t j = 0; j < plan.n; ++j)
        std::memcpy(to + j * plan.col_stride_c * element, from + j * plan.col_stride_bias * element,
                    static_cast<std::size_t>(element));
    }
  }
  GemmPlan product = plan;
  product.bias = nullptr;
  gemm_kernel(kCPU, product);
}

EMBER_REGISTER_KERNEL(::ember::addmm_kernel, CPU, addmm);

}  // namespace ember::cpu
