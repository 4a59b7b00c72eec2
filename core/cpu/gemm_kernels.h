// core/cpu/gemm_kernels.h — the GEMM micro-kernels and how one is chosen at run time.
//
// Tutorial §2.4 (matrix multiplication). core/cpu/gemm.cpp owns the blocking, the packing
// and the threads; a micro-kernel only computes one register tile of C:
//
//   C[0:rows, 0:cols] = alpha * sum_p A(i, p) * B(p, j) + (read_c ? beta * C : 0)
//
// for at most MR rows and NR columns. The tile's A values are *broadcast* one at a time, so
// they may come from anywhere: a packed panel (MR values per k step), a column-major A
// (the same, with the matrix's own stride) or a row-major A (rows addressed from two
// base pointers). That is why small products need not pack A at all. B is read as NR-wide vectors, so its NR values
// of one k step must be adjacent and readable up to NR (a packed, zero-padded panel, or a
// row-major B whose panel lies wholly inside the matrix); C is written with masked or
// partial stores, so edge tiles need no scratch copy.
//
// Each SIMD kernel lives in its own translation unit compiled with its own instruction-set
// flags (core/CMakeLists.txt), so the rest of the library still runs on any x86-64 CPU:
//   gemm_kernel_avx512.cpp   12 x 32 floats / 12 x 16 doubles in zmm registers
//   gemm_kernel_avx2.cpp      6 x 16 floats /  6 x 8 doubles in ymm registers (with FMA)
//   gemm.cpp                  the portable C++ kernel (every dtype, every CPU)
//   gemm_kernel_bf16_avx512.cpp  bfloat16 operands, 12 x 32 float accumulators (vdpbf16ps):
//                             a whole GEMM of its own, since its packing pairs up k
// Which one runs is decided by cpuid (__builtin_cpu_supports) unless the environment
// variable EMBER_GEMM_KERNEL=portable|avx2|avx512 forces one (tests and benchmarks).
#pragma once

#include <cstdint>
#include <string>

namespace ember {
struct GemmPlan;
}

namespace ember::cpu {

// One register tile, or `panels` of them side by side. A(i, p) = a[i * a_row_step + p * a_k_step];
// B(p, j) = b[p * b_k_step + j] (j < NR must be readable; columns past `cols` are computed but
// never stored); C(i, j) = c[i * c_row_stride + j]. read_c == false never reads C, so C may
// hold NaNs (beta == 0). Tile q of a row of `panels` tiles (panels > 1 only with cols == NR)
// reads B at b + q * b_panel_step and writes C at c + q * NR, with the same A.
template <class T>
struct TileArgs {
  const T* a = nullptr;
  std::int64_t a_row_step = 0, a_k_step = 0;
  const T* b = nullptr;
  std::int64_t b_k_step = 0;
  T* c = nullptr;
  std::int64_t c_row_stride = 0;
  std::int64_t k = 0, rows = 0, cols = 0;  // 1 <= rows <= MR, 1 <= cols <= NR
  std::int64_t panels = 1, b_panel_step = 0;
  T alpha = T(1), beta = T(0);
  bool read_c = false;
  // B read in place, its last vector column ending inside the matrix: that vector is loaded
  // with a mask (cols says how many lanes), never past the matrix. Only for a kernel whose
  // reads_partial_b is set; the others are given a zero-padded copy of such a panel.
  bool b_partial = false;
};

template <class T>
using TileFn = void (*)(const TileArgs<T>& tile);

// Packs one panel: out[p * W + i] = src[i * stride_i + p * stride_p] for i < rows, p < depth,
// and zeros for rows <= i < W, where W = MR for an A panel and NR for a B panel. Returns false
// for strides it does not handle; the portable loop in core/cpu/gemm_pack.h then runs. The
// SIMD files provide vectorised copies (stride_i == 1) and register transposes (stride_p == 1).
template <class T>
using PackFn = bool (*)(const T* src, std::int64_t stride_i, std::int64_t stride_p, std::int64_t rows,
                        std::int64_t depth, T* out);

// A micro-kernel plus the blocking that suits it.
//   mr x nr   the register tile;
//   kc        the depth slice: an mr x kc A panel stays in L1 while it meets every B panel;
//   nc        the columns of one packed B slice (kc x nc, kept in L2, shared by the threads).
// tile_a_kstep serves A panels whose mr values per k step are adjacent (a_row_step == 1:
// packed or column-major A); tile_a_rows serves row-major A (a_k_step == 1).
template <class T>
struct MicroKernel {
  const char* name = "portable";
  std::int64_t mr = 0, nr = 0;
  std::int64_t kc = 0, nc = 0;
  TileFn<T> tile_a_kstep = nullptr;
  TileFn<T> tile_a_rows = nullptr;
  PackFn<T> pack_a = nullptr;  // A panel (W = mr); null: the portable loop
  PackFn<T> pack_b = nullptr;  // B panel (W = nr); null: the portable loop
  bool reads_partial_b = false;  // honours TileArgs::b_partial (the SIMD kernels)
};

// The SIMD kernels (defined in their own files). Call only when the CPU supports them.
MicroKernel<float> avx512_kernel_f32();
MicroKernel<double> avx512_kernel_f64();
MicroKernel<float> avx2_kernel_f32();
MicroKernel<double> avx2_kernel_f64();

// The bfloat16 GEMM (core/cpu/gemm_kernel_bf16_avx512.cpp): a whole GemmPlan of bfloat16
// operands. Call only when bfloat16_gemm_usable() says yes.
void gemm_bfloat16_avx512(const GemmPlan& plan);
// The same with a float32 C (plan.c points at floats): C = alpha * A·B + beta * C, not rounded,
// for sums of several products that round once at the end (the convolution's gradients).
void gemm_bfloat16_to_float32_avx512(const GemmPlan& plan);
// The bfloat16 GEMM's packed B, for a producer that writes B in it directly instead of a
// row-major B the GEMM would pack (the convolution's im2col, core/cpu/im2col.cpp):
// `panels` panels of 32 columns, panel q at q * panel_halves; in it, pair p (rows 2p and
// 2p + 1 of k) at p * 64, the two rows' 32 values interleaved column by column. `pairs`
// covers k, rounded up to whole AMX tiles when the GEMM runs on AMX (those pairs are zeros);
// `amx` says which kernel the layout is for, and the product runs on that one.
struct BFloat16PanelLayout {
  std::int64_t pairs = 0, panel_halves = 0, panels = 0;
  bool amx = false;
};
BFloat16PanelLayout bfloat16_panel_layout(std::int64_t k, std::int64_t n);
// A row of B given as a masked, shifted view of memory at `base` (the producer's source, given
// with each call): entry e is base[offset + e] where bit e % 32 of lane_masks[e / 32] is set,
// else +0.0 (a mask is zero past the row's n entries). Views do not depend on `base`, so a
// convolution builds them once per call and packs every sample with them.
struct BFloat16MaskedRow {
  std::int64_t offset = 0;
  const std::uint32_t* lane_masks = nullptr;  // one per panel
};
// Writes rows[0, 2 * layout.pairs) (over `base`) into the panels of `packed`, rows 2p and
// 2p + 1 as pair p.
void pack_bfloat16_rows(const std::uint16_t* base, const BFloat16MaskedRow* rows, const BFloat16PanelLayout& layout,
                        std::uint16_t* packed);
// Writes B = rowsᵀ instead: row 32q + j of `rows` is column 32q + j of B, its entries B's k
// (rows[0, 32 * layout.panels), their lane masks covering the 2 * layout.pairs entries).
void pack_bfloat16_rows_transposed(const std::uint16_t* base, const BFloat16MaskedRow* rows,
                                   const BFloat16PanelLayout& layout, std::uint16_t* packed);
// gemm_bfloat16_avx512 with B given packed in `layout` (plan.b is not read; batch 1); with
// float32_c, C is float32 and not rounded, as gemm_bfloat16_to_float32_avx512. `packed_a`, on
// a vdpbf16ps layout (not AMX), is A packed by pack_bfloat16_a, for an A shared by many
// products (a convolution's weights, one product per sample), or null to pack plan.a.
void gemm_bfloat16_packed_b_avx512(const GemmPlan& plan, const BFloat16PanelLayout& layout,
                                   const std::uint16_t* packed_b, bool float32_c = false,
                                   const std::uint16_t* packed_a = nullptr);
// The vdpbf16ps kernel's packed A for an m x k plan.a (in 16-bit units), and the packing.
std::int64_t bfloat16_packed_a_halves(std::int64_t m, std::int64_t k);
void pack_bfloat16_a(const GemmPlan& plan, std::uint16_t* packed_a);
// Whether a bfloat16 GEMM reads its 16-bit operands directly right now: the CPU has
// AVX512-BF16 and EMBER_GEMM_KERNEL does not force a kernel without it (portable, avx2).
// Otherwise core/linalg.cpp widens them to float32.
bool bfloat16_gemm_usable();
// Whether that bfloat16 GEMM runs on AMX tiles (tdpbf16ps) rather than vdpbf16ps: it is
// usable, the CPU has AMX-BF16, Linux granted the process the tile state (arch_prctl
// ARCH_REQ_XCOMP_PERM, asked once), and EMBER_AMX is not 0. EMBER_AMX is read with
// EMBER_GEMM_KERNEL (once; reload_gemm_kernel_choice() reads both again); a value other than
// 0, 1 or empty is a ValueError.
bool amx_bfloat16_usable();

// "portable", "avx2" or "avx512": is this kernel usable on this CPU?
bool gemm_kernel_available(const std::string& name);
// The kernel a float32 GEMM would use right now (honours EMBER_GEMM_KERNEL). Throws
// ValueError for an unknown name or a kernel this CPU cannot run.
std::string active_gemm_kernel_name();
// The same choice as an enum, for the other vectorised loops that follow it (MaxPool2d(2),
// flash attention's rows), so that one variable selects them all and a per-call check
// costs a load, not a string.
enum class VectorIsa { kPortable, kAvx2, kAvx512 };
VectorIsa active_vector_isa();
// Whether the CPU has AVX-512 BW (masked loads and stores of 16-bit lanes), asked once.
bool cpu_has_avx512bw();
// EMBER_GEMM_KERNEL is read at the first GEMM and kept, as EMBER_KERNELS is
// (core/kernel_mode.h). A program that changes the variable afterwards (the tests, with
// setenv) calls this, and the next GEMM reads it again.
void reload_gemm_kernel_choice();

}  // namespace ember::cpu
