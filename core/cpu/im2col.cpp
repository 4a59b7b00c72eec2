// core/cpu/im2col.cpp — the convolution's im2col and col2im (see im2col.h): the input patches
// laid out as the columns of a matrix, and their adjoint.
//
// Issue 19 (Conv2d), tutorial beyond §5. conv_kernels.cpp multiplies these columns by the
// weights; this file only moves values. For the common "same" convolution (stride 1, output
// as wide as the input) a cols row is the input plane shifted by a constant, so im2col and
// col2im run one masked loop per row instead of one short copy per output row (shifted_row
// below; the CNN's step was spending a fifth of its time in those short copies and their
// memset/memmove calls). A bfloat16 forward writes those rows straight into the bfloat16
// GEMM's packed panels (im2col_bfloat16_panels).
#include <ember/core/cpu/im2col.h>

#include <algorithm>
#include <array>
#include <type_traits>
#include <vector>

#include <ember/core/cpu/wide_clones.h>

namespace ember::cpu {

namespace {

// The output columns x whose input column w = x * stride + offset lies inside [0, width):
// [begin, end). Everything left of begin and right of end reads the zero padding, so the
// loops below copy (or add) the middle without a bounds check per element.
struct ColumnRange {
  std::int64_t begin, end;
};
inline ColumnRange inside_columns(std::int64_t offset, std::int64_t stride, std::int64_t width,
                                  std::int64_t out_width) {
  const auto ceil_div = [](std::int64_t a, std::int64_t b) { return (a + b - 1) / b; };
  const std::int64_t begin = offset >= 0 ? 0 : std::min(out_width, ceil_div(-offset, stride));
  const std::int64_t end = width - offset <= 0 ? 0 : std::min(out_width, ceil_div(width - offset, stride));
  return {begin, std::max(begin, end)};
}

// Same-width rows: stride 1 and out_w == in_w (a "same" convolution, e.g. 3x3 with padding 1).
// Then output pixel (y, x) of the cols row for kernel tap (i, j) reads the input pixel at a
// fixed distance `shift` from its own position in the plane, so the part of the row that reads
// the image is one loop over consecutive entries, not one short copy per output row. Inside
// it, the entries whose column x reads the left or right padding (x outside
// inside_columns(j)) are masked out by `keep`, which depends on the tap's column j only.
struct ShiftedRow {
  std::int64_t first, last;  // [first, last): the cols entries that may read the plane
  std::int64_t shift;        // plane index - cols index
};
inline ShiftedRow shifted_row(const Conv2dPlan& p, std::int64_t i, std::int64_t w_offset, ColumnRange inside) {
  const std::int64_t h_offset = i * p.dilation_h - p.pad_h;
  const std::int64_t y0 = std::clamp<std::int64_t>(-h_offset, 0, p.out_h);
  const std::int64_t y1 = std::clamp<std::int64_t>(p.in_h - h_offset, y0, p.out_h);
  ShiftedRow r{0, 0, h_offset * p.in_w + w_offset};
  if (y1 > y0 && inside.end > inside.begin) {  // the first and one past the last entry that reads the image
    r.first = y0 * p.out_w + inside.begin;
    r.last = (y1 - 1) * p.out_w + inside.end;
  }
  return r;
}

// keep[j * L + e] = 1 where entry e of a cols row of tap column j reads inside the image's
// width, else 0: a per-thread table of kernel_w * L entries, rebuilt when the shape changes.
const std::uint32_t* column_masks(const Conv2dPlan& p) {
  thread_local std::vector<std::uint32_t> keep;
  thread_local std::array<std::int64_t, 6> built_for{};
  const std::array<std::int64_t, 6> shape{p.kernel_w, p.dilation_w, p.pad_w, p.in_w, p.out_w, p.out_h};
  if (shape == built_for && !keep.empty()) return keep.data();
  const std::int64_t l = p.out_h * p.out_w;
  keep.resize(static_cast<std::size_t>(p.kernel_w * l));
  for (std::int64_t j = 0; j < p.kernel_w; ++j) {
    const ColumnRange inside = inside_columns(j * p.dilation_w - p.pad_w, p.stride_w, p.in_w, p.out_w);
    for (std::int64_t y = 0; y < p.out_h; ++y)
      for (std::int64_t x = 0; x < p.out_w; ++x)
        keep[static_cast<std::size_t>(j * l + y * p.out_w + x)] = x >= inside.begin && x < inside.end ? 1 : 0;
  }
  built_for = shape;
  return keep.data();
}

// column_masks as bits: bit e % 32 of word [j * ceil(L / 32) + e / 32] (the bfloat16 packed
// im2col's lane masks, one word per 32 entries).
const std::uint32_t* column_mask_bits(const Conv2dPlan& p) {
  thread_local std::vector<std::uint32_t> bits;
  thread_local std::array<std::int64_t, 6> built_for{};
  const std::array<std::int64_t, 6> shape{p.kernel_w, p.dilation_w, p.pad_w, p.in_w, p.out_w, p.out_h};
  if (shape == built_for && !bits.empty()) return bits.data();
  const std::int64_t l = p.out_h * p.out_w, words = (l + 31) / 32;
  const std::uint32_t* keep = column_masks(p);
  bits.assign(static_cast<std::size_t>(p.kernel_w * words), 0);
  for (std::int64_t j = 0; j < p.kernel_w; ++j)
    for (std::int64_t e = 0; e < l; ++e)
      if (keep[j * l + e] != 0) bits[static_cast<std::size_t>(j * words + e / 32)] |= std::uint32_t{1} << (e % 32);
  built_for = shape;
  return bits.data();
}

// The two masked row loops (performance: float rows are compiled for wide vectors too,
// core/cpu/wide_clones.h; the mask becomes a masked load or a blend).
//   copy: dst[e] = keep[e] ? src[e] : 0        add: dst[e] += keep[e] ? src[e] : 0
template <class T>
void copy_kept(const T* __restrict src, const std::uint32_t* __restrict keep, T* __restrict dst, std::int64_t n) {
  for (std::int64_t e = 0; e < n; ++e) {
    const T value = src[e];
    dst[e] = keep[e] != 0 ? value : T(0);
  }
}
template <class T>
void add_kept(const T* __restrict src, const std::uint32_t* __restrict keep, T* __restrict dst, std::int64_t n) {
  for (std::int64_t e = 0; e < n; ++e) {
    const T sum = dst[e] + src[e];
    dst[e] = keep[e] != 0 ? sum : dst[e];
  }
}
EMBER_WIDE_CLONES void copy_kept_float(const float* src, const std::uint32_t* keep, float* dst, std::int64_t n) {
  copy_kept(src, keep, dst, n);
}
// 16-bit floats are copied as their bits (all-zero bits are +0.0 in bfloat16 and float16):
// the select then vectorises, which it does not on the BFloat16 / Half classes.
EMBER_WIDE_CLONES void copy_kept_16_bit(const std::uint16_t* src, const std::uint32_t* keep, std::uint16_t* dst,
                                        std::int64_t n) {
  copy_kept(src, keep, dst, n);
}
EMBER_WIDE_CLONES void add_kept_float(const float* src, const std::uint32_t* keep, float* dst, std::int64_t n) {
  add_kept(src, keep, dst, n);
}

}  // namespace

template <class T>
void im2col(const Conv2dPlan& p, const T* in, std::int64_t channels, T* cols) {
  const std::int64_t l = p.out_h * p.out_w;
  const std::uint32_t* keep = same_width_rows(p) ? column_masks(p) : nullptr;
  for (std::int64_t c = 0; c < channels; ++c) {
    const T* plane = in + c * p.in_h * p.in_w;
    for (std::int64_t i = 0; i < p.kernel_h; ++i) {
      for (std::int64_t j = 0; j < p.kernel_w; ++j) {
        T* row = cols + ((c * p.kernel_h + i) * p.kernel_w + j) * l;
        const std::int64_t w_offset = j * p.dilation_w - p.pad_w;
        const ColumnRange inside = inside_columns(w_offset, p.stride_w, p.in_w, p.out_w);
        if (keep != nullptr) {
          const ShiftedRow r = shifted_row(p, i, w_offset, inside);
          const std::uint32_t* keep_j = keep + j * l;
          fill_row(row, r.first, T(0));
          if (r.last > r.first) {  // plane + shift + e lies in the plane for every e in [first, last)
            const T* src = plane + (r.first + r.shift);
            if constexpr (std::is_same_v<T, float>) {
              copy_kept_float(src, keep_j + r.first, row + r.first, r.last - r.first);
            } else if constexpr (SixteenBitFloat<T>) {
              copy_kept_16_bit(bits_of(src), keep_j + r.first, bits_of(row + r.first), r.last - r.first);
            } else {
              copy_kept(src, keep_j + r.first, row + r.first, r.last - r.first);
            }
          }
          fill_row(row + r.last, l - r.last, T(0));
          continue;
        }
        for (std::int64_t y = 0; y < p.out_h; ++y) {
          T* dst = row + y * p.out_w;
          const std::int64_t h = y * p.stride_h - p.pad_h + i * p.dilation_h;
          if (h < 0 || h >= p.in_h) {
            std::fill(dst, dst + p.out_w, T(0));
            continue;
          }
          const T* src = plane + h * p.in_w;
          std::fill(dst, dst + inside.begin, T(0));
          if (p.stride_w == 1) {  // one contiguous run: a vectorised copy
            std::copy(src + inside.begin + w_offset, src + inside.end + w_offset, dst + inside.begin);
          } else {
            for (std::int64_t x = inside.begin; x < inside.end; ++x) dst[x] = src[x * p.stride_w + w_offset];
          }
          std::fill(dst + inside.end, dst + p.out_w, T(0));
        }
      }
    }
  }
}

template <class T>
void col2im(const Conv2dPlan& p, const T* cols, std::int64_t channels, T* in) {
  const std::int64_t l = p.out_h * p.out_w;
  const std::uint32_t* keep = same_width_rows(p) ? column_masks(p) : nullptr;
  for (std::int64_t c = 0; c < channels; ++c) {
    T* plane = in + c * p.in_h * p.in_w;
    for (std::int64_t i = 0; i < p.kernel_h; ++i) {
      for (std::int64_t j = 0; j < p.kernel_w; ++j) {
        const T* row = cols + ((c * p.kernel_h + i) * p.kernel_w + j) * l;
        const std::int64_t w_offset = j * p.dilation_w - p.pad_w;
        const ColumnRange inside = inside_columns(w_offset, p.stride_w, p.in_w, p.out_w);
        if (keep != nullptr) {
          const ShiftedRow r = shifted_row(p, i, w_offset, inside);
          const std::uint32_t* keep_j = keep + j * l;
          if (r.last > r.first) {
            T* dst = plane + (r.first + r.shift);
            if constexpr (std::is_same_v<T, float>) add_kept_float(row + r.first, keep_j + r.first, dst, r.last - r.first);
            else add_kept(row + r.first, keep_j + r.first, dst, r.last - r.first);
          }
          continue;
        }
        for (std::int64_t y = 0; y < p.out_h; ++y) {
          const std::int64_t h = y * p.stride_h - p.pad_h + i * p.dilation_h;
          if (h < 0 || h >= p.in_h) continue;
          const T* src = row + y * p.out_w;
          T* dst = plane + h * p.in_w;
          for (std::int64_t x = inside.begin; x < inside.end; ++x) dst[x * p.stride_w + w_offset] += src[x];
        }
      }
    }
  }
}

// im2col for bfloat16 same-width rows written straight into the bfloat16 GEMM's packed B
// panels (BFloat16PanelLayout, core/cpu/gemm_kernels.h), two cols rows at a time: the GEMM
// would otherwise read the cols buffer back and interleave its row pairs itself, so this
// saves writing and reading cols. Same values in the same places, so the same bits.
BFloat16ColsRows bfloat16_cols_rows(const Conv2dPlan& p, std::int64_t channels, std::int64_t rows, std::int64_t chunks) {
  const std::int64_t l = p.out_h * p.out_w, k = channels * p.kernel_h * p.kernel_w;
  const std::uint32_t* keep_bits = column_mask_bits(p);
  const std::int64_t words = (l + 31) / 32;
  BFloat16ColsRows result;
  result.rows.resize(static_cast<std::size_t>(rows));
  result.lane_masks.assign(static_cast<std::size_t>(rows * chunks), 0);  // past k and l: zeros
  for (std::int64_t row = 0; row < std::min(k, rows); ++row) {  // (c, i, j): a view of plane c
    const std::int64_t c = row / (p.kernel_h * p.kernel_w), i = row / p.kernel_w % p.kernel_h, j = row % p.kernel_w;
    const std::int64_t w_offset = j * p.dilation_w - p.pad_w;
    const ShiftedRow r = shifted_row(p, i, w_offset, inside_columns(w_offset, p.stride_w, p.in_w, p.out_w));
    std::uint32_t* masks = result.lane_masks.data() + row * chunks;
    for (std::int64_t q = 0; q < chunks && q < words; ++q) {
      // Entries [first, last) of panel q's 32, and of those the ones inside the width.
      const std::int64_t begin = std::max(32 * q, r.first) - 32 * q, end = std::min(32 * q + 32, r.last) - 32 * q;
      if (end <= begin) continue;
      const std::uint64_t range = ((std::uint64_t{1} << end) - 1) & ~((std::uint64_t{1} << begin) - 1);
      masks[q] = static_cast<std::uint32_t>(range) & keep_bits[j * words + q];
    }
    result.rows[static_cast<std::size_t>(row)] = {c * p.in_h * p.in_w + r.shift, masks};
  }
  for (std::int64_t row = k; row < rows; ++row)
    result.rows[static_cast<std::size_t>(row)] = {0, result.lane_masks.data() + row * chunks};
  return result;
}

void im2col_bfloat16_panels(const BFloat16* in, const BFloat16ColsRows& cols_rows, const BFloat16PanelLayout& layout,
                            std::uint16_t* packed) {
  pack_bfloat16_rows(bits_of(in), cols_rows.rows.data(), layout, packed);
}

void im2col_bfloat16_transposed_panels(const BFloat16* in, const BFloat16ColsRows& cols_rows,
                                       const BFloat16PanelLayout& layout, std::uint16_t* packed) {
  pack_bfloat16_rows_transposed(bits_of(in), cols_rows.rows.data(), layout, packed);
}

template void im2col<float>(const Conv2dPlan&, const float*, std::int64_t, float*);
template void im2col<double>(const Conv2dPlan&, const double*, std::int64_t, double*);
template void im2col<BFloat16>(const Conv2dPlan&, const BFloat16*, std::int64_t, BFloat16*);
template void col2im<float>(const Conv2dPlan&, const float*, std::int64_t, float*);
template void col2im<double>(const Conv2dPlan&, const double*, std::int64_t, double*);

}  // namespace ember::cpu
