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

namespace ember {

using Shape = std::vector<std::int64_t>;

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

// Product of sizes (1 for a 0-d tensor).
std::int64_t compute_numel(IntArrayRef sizes);
// Row-major strides for sizes.
Shape contiguous_strides(IntArrayRef sizes);
// True when sizes/strides describe a row-major layout (size-1 dims may have any stride).
bool is_contiguous_layout(IntArrayRef sizes, IntArrayRef strides);

// Turns a possibly negative dim into [0, ndim). PyTorch's message on failure:
// "Dimension out of range (expected to be in range of [-2, 1], but got 2)".
// A 0-d tensor accepts dims -1 and 0 (as in PyTorch).
std::int64_t wrap_dim(std::int64_t dim, std::int64_t ndim);

// NumPy/PyTorch broadcasting of two shapes. On mismatch throws ShapeError:
// "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 1".
Shape broadcast_shapes(IntArrayRef a, IntArrayRef b);

// Resolves one -1 in a view/reshape request: "shape '[4, -1]' is invalid for input of size 6".
Shape infer_size(IntArrayRef requested, std::int64_t numel);

// "[2, 3]" — how PyTorch prints a list of sizes in messages and torch.Size.
std::string shape_to_string(IntArrayRef sizes);

}  // namespace ember
