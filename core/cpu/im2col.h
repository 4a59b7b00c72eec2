// core/cpu/im2col.h — im2col and col2im, the data movement of the CPU convolution
// (core/cpu/conv_kernels.cpp multiplies what they lay out; core/cpu/im2col.cpp has them).
//
// A convolution of one sample and one group is one matrix product once the input patches
// are laid out as columns:
//   cols[K = C_g * kH * kW, L = oH * oW]     cols[(c, i, j), (y, x)] = in[c, y*sH - pH + i*dH, x*sW - pW + j*dW]
// (zero where that reads the padding), and the input gradient folds d cols back by the
// adjoint, col2im.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include <ember/core/conv_plans.h>
#include <ember/core/cpu/gemm_kernels.h>
#include <ember/core/cpu/sixteen_bit_words.h>
#include <ember/core/reduced_float.h>

namespace ember::cpu {

// Same-width rows: stride 1 and out_w == in_w (a "same" convolution, e.g. 3x3 with padding 1),
// where every cols row is the input plane shifted by a constant (im2col.cpp).
inline bool same_width_rows(const Conv2dPlan& p) {
  return p.stride_h == 1 && p.stride_w == 1 && p.out_w == p.in_w;
}

// cols[K, L] from the C_g planes (`channels`) of one sample and group starting at `in`.
// T: float, double, BFloat16.
template <class T>
void im2col(const Conv2dPlan& p, const T* in, std::int64_t channels, T* cols);

// The adjoint of im2col: in[c, h, w] += cols[(c, i, j), (y, x)] for every entry read from
// (h, w). `in` must start zeroed. One thread owns these planes, so no atomics. With
// same-width rows, each cols row is added in one masked loop (an entry that im2col took from
// the padding adds nothing).
// T: float, double (bfloat16 gradients are folded in float32).
template <class T>
void col2im(const Conv2dPlan& p, const T* cols, std::int64_t channels, T* in);

// im2col for bfloat16 same-width rows written straight into the bfloat16 GEMM's packed B
// panels (BFloat16PanelLayout, core/cpu/gemm_kernels.h), two cols rows at a time: the GEMM
// would otherwise read the cols buffer back and interleave its row pairs itself, so this
// saves writing and reading cols. Same values in the same places, so the same bits.
// Each cols row is a masked, shifted view of an input plane that depends on the shapes only:
// bfloat16_cols_rows builds the views of cols rows [0, rows) (zeros past K) with lane masks
// for `chunks` chunks of 32 entries once per call, and im2col_bfloat16_panels packs one
// sample and group (`in`: its first plane) with them: the forward's B = cols (rows
// 2 * layout.pairs, chunks layout.panels).
// The rows point into lane_masks, so the pair moves (a vector's move keeps its buffer) but is
// never copied.
struct BFloat16ColsRows {
  std::vector<BFloat16MaskedRow> rows;
  std::vector<std::uint32_t> lane_masks;  // the rows' masks, `chunks` each
  BFloat16ColsRows() = default;
  BFloat16ColsRows(BFloat16ColsRows&&) = default;
  BFloat16ColsRows& operator=(BFloat16ColsRows&&) = default;
  BFloat16ColsRows(const BFloat16ColsRows&) = delete;
  BFloat16ColsRows& operator=(const BFloat16ColsRows&) = delete;
};
BFloat16ColsRows bfloat16_cols_rows(const Conv2dPlan& p, std::int64_t channels, std::int64_t rows, std::int64_t chunks);
void im2col_bfloat16_panels(const BFloat16* in, const BFloat16ColsRows& cols_rows, const BFloat16PanelLayout& layout,
                            std::uint16_t* packed);
// The same for the weight gradient's B = colsᵀ (layout for k = L, n = K; the views of rows
// 32 * layout.panels with ceil(L / 32) chunks): each panel is 32 cols rows transposed.
void im2col_bfloat16_transposed_panels(const BFloat16* in, const BFloat16ColsRows& cols_rows,
                                       const BFloat16PanelLayout& layout, std::uint16_t* packed);

// row[0, n) = value. A bfloat16 value is filled as its 16 bits: std::fill over the BFloat16
// class ran one scalar 2-byte store per element (6 % of the bfloat16 CNN step).
template <class T>
void fill_row(T* row, std::int64_t n, T value) {
  if constexpr (SixteenBitFloat<T>) {
    std::fill_n(bits_of(row), n, value.bits);
  } else {
    std::fill_n(row, n, value);
  }
}

}  // namespace ember::cpu
