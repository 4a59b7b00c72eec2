// core/cpu/gemm_pack.h — copying blocks of A and B into the order the micro-kernel reads.
//
// Tutorial §2.4 (matrix multiplication). Used by core/cpu/gemm.cpp only. A micro-kernel
// (core/cpu/gemm_kernels.h) reads, at each k step, MR values of A and NR adjacent values of B.
// "Packing" copies a block once into exactly that order, zero-padded past the matrix edge:
//
//   A panel (MR rows x depth):   out[p * MR + i] = A(row0 + i, col0 + p)
//   B panel (depth x NR cols):   out[p * NR + j] = B(row0 + p, col0 + j)
//
// so that the kernel then streams through contiguous, cache- and TLB-friendly memory. Which
// copy loop runs depends on the operand's layout:
//   * the wanted values already adjacent (column-major A, row-major B): a plain copy per k step;
//   * adjacent along k instead (row-major A, column-major B): a transpose;
//   * anything else (strided views): element by element.
// The SIMD kernel files provide vectorised versions of the first two (PackFn); the loops here
// are the portable fallback. Operands are views with arbitrary strides, so no transpose of a
// whole matrix is ever materialised.
#pragma once

#include <cstdint>

#include <ember/core/cpu/gemm_kernels.h>

namespace ember::cpu::pack {

// One operand's geometry: element (i, j) is at data[i * row_stride + j * col_stride].
template <class T>
struct MatrixRef {
  const T* data;
  std::int64_t row_stride, col_stride;
  const T* at(std::int64_t i, std::int64_t j) const { return data + i * row_stride + j * col_stride; }
};

// out[p * width + i] = src(i, p) for i < rows, p < depth; zeros for rows <= i < width, with
// src(i, p) = src[i * stride_i + p * stride_p]: the portable engine behind both packs.
template <class T>
void pack_interleaved(const T* src, std::int64_t stride_i, std::int64_t stride_p, std::int64_t rows,
                      std::int64_t depth, std::int64_t width, T* out) {
  if (stride_i == 1) {
    // The `rows` values of one step are adjacent: one short copy per step.
    for (std::int64_t p = 0; p < depth; ++p) {
      const T* from = src + p * stride_p;
      T* to = out + p * width;
      for (std::int64_t i = 0; i < rows; ++i) to[i] = from[i];
      for (std::int64_t i = rows; i < width; ++i) to[i] = T(0);
    }
    return;
  }
  if (stride_p == 1) {
    // Adjacent along p: read each source row contiguously, write with stride `width`.
    for (std::int64_t i = 0; i < rows; ++i) {
      const T* from = src + i * stride_i;
      for (std::int64_t p = 0; p < depth; ++p) out[p * width + i] = from[p];
    }
  } else {
    for (std::int64_t p = 0; p < depth; ++p)
      for (std::int64_t i = 0; i < rows; ++i) out[p * width + i] = src[i * stride_i + p * stride_p];
  }
  for (std::int64_t p = 0; p < depth; ++p)
    for (std::int64_t i = rows; i < width; ++i) out[p * width + i] = T(0);
}

// A[row0 : row0 + rows, col0 : col0 + depth] -> one MR-row panel.
template <class T>
void pack_a_panel(const MatrixRef<T>& a, std::int64_t row0, std::int64_t rows, std::int64_t col0, std::int64_t depth,
                  const MicroKernel<T>& kernel, T* out) {
  const T* src = a.at(row0, col0);
  if (kernel.pack_a == nullptr || !kernel.pack_a(src, a.row_stride, a.col_stride, rows, depth, out))
    pack_interleaved(src, a.row_stride, a.col_stride, rows, depth, kernel.mr, out);
}

// B[row0 : row0 + depth, col0 : col0 + cols] -> one NR-column panel (B's columns play the
// role of the interleaved "rows").
template <class T>
void pack_b_panel(const MatrixRef<T>& b, std::int64_t row0, std::int64_t depth, std::int64_t col0, std::int64_t cols,
                  const MicroKernel<T>& kernel, T* out) {
  const T* src = b.at(row0, col0);
  if (kernel.pack_b == nullptr || !kernel.pack_b(src, b.col_stride, b.row_stride, cols, depth, out))
    pack_interleaved(src, b.col_stride, b.row_stride, cols, depth, kernel.nr, out);
}

}  // namespace ember::cpu::pack
