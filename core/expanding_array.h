// core/expanding_array.h — an int-or-tuple argument: `3` or `{3, 5}` (libtorch's ExpandingArray).
//
// Issue 19. PyTorch's conv2d and pooling functions take kernel_size, stride, padding and
// dilation as one int (used for both dims) or a tuple of one per spatial dim. An
// ExpandingArray<2> keeps what the caller wrote, so the op can refuse a wrong-length list
// with its own PyTorch message naming the argument ("expected stride to be a single integer
// value or a list of 2 values ..."); expanded() then gives one value per dim. An empty one
// (`{}`, the default) stands for PyTorch's None (max_pool2d's stride = kernel_size).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

namespace ember {

template <std::size_t D>
class ExpandingArray {
 public:
  ExpandingArray() = default;
  ExpandingArray(std::int64_t value) : given_{value} {}  // NOLINT: `3` reads as {3, 3}
  ExpandingArray(int value) : given_{value} {}           // NOLINT
  ExpandingArray(std::initializer_list<std::int64_t> values) : given_(values) {}
  ExpandingArray(std::vector<std::int64_t> values) : given_(std::move(values)) {}  // NOLINT
  ExpandingArray(const std::array<std::int64_t, D>& values) : given_(values.begin(), values.end()) {}  // NOLINT

  bool empty() const { return given_.empty(); }
  // One value (used for every dim) or exactly D.
  bool valid() const { return given_.size() == 1 || given_.size() == D; }
  const std::vector<std::int64_t>& given() const { return given_; }
  // One value per dim; call only when valid().
  std::array<std::int64_t, D> expanded() const {
    std::array<std::int64_t, D> out{};
    for (std::size_t d = 0; d < D; ++d) out[d] = given_.size() == 1 ? given_[0] : given_[d];
    return out;
  }

 private:
  std::vector<std::int64_t> given_;
};

}  // namespace ember
