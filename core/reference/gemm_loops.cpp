// core/reference/gemm_loops.cpp — the reference matrix multiply: a triple loop.
//
// Tutorial §2.4 (matrix multiplication) and every nn.Linear layer. For each batch entry b
// (GemmPlan, core/strided_index.h):
//
//     C[i, j] = alpha * (Σ_p A[i, p] · B[p, j]) + beta * C[i, j]
//
// with A[i, p] at a + b*batch_stride_a + i*row_stride_a + p*col_stride_a (a transposed
// operand is only swapped strides), and C not read when beta == 0 (it may be uninitialised).
// Read this before core/cpu/gemm.cpp.
//
// Rounding, chosen to be the fast kernels' and PyTorch's BLAS's: for floating types each
// step of the dot product is one fused multiply-add (std::fma: a·b + acc rounded once, as
// the AVX2/AVX-512 kernels' FMA instructions), p running from 0 up; then alpha multiplies,
// and beta * C is added with one more fma. Integers wrap modulo 2^N (core/element_math.h).
//
// Where the fast GEMM differs (core/cpu/gemm.cpp, gemm_driver.h, gemm_kernel_*.cpp): it
// packs panels of A and B into contiguous blocks that stay in cache, computes a 4x8 to
// 12x32 tile of C at once in vector registers (a micro-kernel per instruction set), may
// compute Cᵀ = Bᵀ·Aᵀ instead, and shares tiles among threads. Each C element is still one
// dot product in order of p, so with k <= 256 (one k slice) the AVX2/AVX-512 kernels give
// these bits exactly; longer dot products are summed slice by slice (256 at a time, each
// slice added onto C), and the portable kernel rounds the multiply and the add separately,
// so there the last bits may differ.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include <ember/core/dispatch.h>
#include <ember/core/element_math.h>
#include <ember/core/error.h>
#include <ember/core/reference/reference_kernels.h>

namespace ember::reference {

namespace {

// acc + x * y: one rounding for floating types, wrapping for integers.
template <class T>
T multiply_add(T x, T y, T acc) {
  if constexpr (std::is_floating_point_v<T>) return std::fma(x, y, acc);
  else return math::add(acc, math::mul(x, y));
}

template <class T>
void gemm_typed(const GemmPlan& plan) {
  const T* a = static_cast<const T*>(plan.a);
  const T* b = static_cast<const T*>(plan.b);
  T* c = static_cast<T*>(plan.c);
  const T alpha = static_cast<T>(plan.alpha), beta = static_cast<T>(plan.beta);
  const bool read_c = plan.beta != 0.0;
  for (std::int64_t batch = 0; batch < plan.batch; ++batch) {
    for (std::int64_t i = 0; i < plan.m; ++i) {
      for (std::int64_t j = 0; j < plan.n; ++j) {
        T dot = T(0);
        for (std::int64_t p = 0; p < plan.k; ++p) {
          const T a_ip = a[batch * plan.batch_stride_a + i * plan.row_stride_a + p * plan.col_stride_a];
          const T b_pj = b[batch * plan.batch_stride_b + p * plan.row_stride_b + j * plan.col_stride_b];
          dot = multiply_add(a_ip, b_pj, dot);
        }
        T& out = c[batch * plan.batch_stride_c + i * plan.row_stride_c + j * plan.col_stride_c];
        // k == 0: the product is all zeros, so C = beta * C (and C = 0 when beta == 0).
        const T value = plan.k == 0 ? T(0) : math::mul(alpha, dot);
        out = read_c ? multiply_add(beta, out, value) : value;
      }
    }
  }
}

}  // namespace

// GemmPlan::bias is never set here: the reference loops register no addmm_kernel
// (core/backend.h), so in reference mode the CPU's addmm kernel serves (the dispatch's
// fallback, core/dispatch.h): it copies the bias into C and asks these loops for beta * C.
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
    default: detail::throw_dtype_not_implemented(plan.dtype);  // core/linalg.cpp widens the 16-bit floats
  }
}

// The CPUReference slots (core/dispatch.h): served when EMBER_KERNELS=reference.
EMBER_REGISTER_KERNEL(::ember::gemm_kernel, CPUReference, gemm);

// The reference multiplies 16-bit floats as core/linalg.cpp's plain path does: widened to
// float32, through the loops above, rounded once.
bool gemm_reads_16_bit(DType) { return false; }
EMBER_REGISTER_KERNEL(::ember::gemm_reads_16_bit_kernel, CPUReference, gemm_reads_16_bit);

}  // namespace ember::reference
