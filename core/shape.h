// core/shape.h — sizes, strides and the small helpers every op uses on them.
//
// A tensor's element (i0, i1, ..., ik) lives at  storage_offset + sum_d i_d * stride_d.
// Contiguous (row-major) strides are the running product of the sizes from the right:
// sizes [2, 3] -> strides [3, 1]. Views (transpose, slice, expand) only change these numbers.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include <ember/core/dim_vector.h>

namespace ember {

// A tensor's sizes or strides: a std::vector-like list held inline up to 5 dims
// (core/dim_vector.h says why).
using Shape = DimVector;

// A read-only view of a list of integers: accepts {3, 2}, a std::vector, or a span.
// Like c10::IntArrayRef, it does not own its elements: never store one.
class IntArrayRef {
 public:
  IntArrayRef() = default;
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"  // by design: valid for the full call
#endif
  IntArrayRef(std::initializer_list<std::int64_t> list) : data_(list.begin()), size_(list.size()) {}  // NOLINT
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
  IntArrayRef(const std::vector<std::int64_t>& vector) : data_(vector.data()), size_(vector.size()) {}  // NOLINT
  IntArrayRef(const DimVector& vector) : data_(vector.data()), size_(vector.size()) {}  // NOLINT
  IntArrayRef(std::span<const std::int64_t> span) : data_(span.data()), size_(span.size()) {}  // NOLINT
  IntArrayRef(const std::int64_t* data, std::size_t size) : data_(data), size_(size) {}

  const std::int64_t* begin() const { return data_; }
  const std::int64_t* end() const { return data_ + size_; }
  const std::int64_t* data() const { return data_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::int64_t operator[](std::size_t i) const { return data_[i]; }
  std::vector<std::int64_t> vec() const { return {begin(), end()}; }
  bool operator==(const IntArrayRef& other) const;

 private:
  const std::int64_t* data_ = nullptr;
  std::size_t size_ = 0;
};

// An owned copy of a list, as a tensor keeps its sizes and strides (IntArrayRef::vec()
// gives a std::vector, as c10's does).
inline Shape to_shape(IntArrayRef values) { return Shape(values.begin(), values.end()); }

// Product of sizes (1 for a 0-d tensor). A product beyond int64 throws ShapeError with
// PyTorch's words: "numel: integer multiplication overflow".
std::int64_t compute_numel(IntArrayRef sizes);
// Row-major strides for sizes. "Stride calculation overflowed" (PyTorch's words) when a
// stride does not fit in int64 — possible only with a 0 among huge sizes, [0, 2^40, 2^40].
Shape contiguous_strides(IntArrayRef sizes);

// "Trying to create tensor with negative dimension -1: [-1]" (PyTorch's words) when a size
// is negative: the first check of every factory and view that takes sizes from the caller.
void check_no_negative_sizes(IntArrayRef sizes);

// The size invariant every tensor keeps (make_tensor checks it; core/tensor.cpp): no size
// is negative ("Trying to create tensor with negative dimension -1: [-1]") and the product
// of the sizes, 0s counted as 1, fits in int64 ("numel: integer multiplication overflow").
// Then numel, row-major strides and the product of any subset of the sizes (flatten, the
// iterator's coalescing) are safe to compute with plain int64 arithmetic.
void check_sizes_fit(IntArrayRef sizes);

// Bytes of a row-major tensor: numel · itemsize, checked before anything is allocated.
// Beyond int64 (the range of every byte count in ember): ShapeError "Storage size
// calculation overflowed with sizes=[4611686018427387904]" (PyTorch's message).
std::int64_t compute_storage_nbytes(IntArrayRef sizes, std::size_t itemsize);

// Bytes a strided layout reaches: (storage_offset + 1 + sum (size_d - 1) · stride_d) ·
// itemsize, 0 when numel is 0 (offset · itemsize must still fit: data_ptr() computes it;
// PyTorch lets a 0-element view sit at any offset). Overflow: "Storage size calculation
// overflowed with sizes=[2] and strides=[4611686018427387904]" (PyTorch's message), also
// for a negative stride over two or more elements, as PyTorch's unsigned sum reports it
// (as_strided and from_blob refuse negative strides first, with their own messages).
std::int64_t compute_storage_nbytes(IntArrayRef sizes, IntArrayRef strides, std::size_t itemsize,
                                    std::int64_t storage_offset = 0);
// True when sizes/strides describe a row-major layout (size-1 dims may have any stride).
bool is_contiguous_layout(IntArrayRef sizes, IntArrayRef strides);

// Turns a possibly negative dim into [0, ndim). PyTorch's message on failure:
// "Dimension out of range (expected to be in range of [-2, 1], but got 2)".
// A 0-d tensor accepts dims -1 and 0 (as in PyTorch). Inline: every op wraps its dims.
[[noreturn]] void throw_dim_out_of_range(std::int64_t dim, std::int64_t ndim);
inline std::int64_t wrap_dim(std::int64_t dim, std::int64_t ndim) {
  const std::int64_t effective = ndim > 0 ? ndim : 1;
  if (dim < -effective || dim >= effective) [[unlikely]] throw_dim_out_of_range(dim, ndim);
  return dim < 0 ? dim + effective : dim;
}

// NumPy/PyTorch broadcasting of two shapes. On mismatch throws ShapeError:
// "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 1".
Shape broadcast_shapes(IntArrayRef a, IntArrayRef b);

// Resolves one -1 in a view/reshape request: "shape '[4, -1]' is invalid for input of size 6".
Shape infer_size(IntArrayRef requested, std::int64_t numel);

// "[2, 3]" — how PyTorch prints a list of sizes in messages and torch.Size.
std::string shape_to_string(IntArrayRef sizes);

}  // namespace ember
