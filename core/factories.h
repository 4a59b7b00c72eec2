// core/factories.h — making tensors: from C++ literals, filled, ranges, from memory.
//
// Tutorial §2.1: torch.tensor(1), torch.tensor([1, 2, 3]), torch.tensor([[1, 2], [3, 4]]).
// In ember:  ember::tensor(1), ember::tensor({1, 2, 3}), ember::tensor({{1, 2}, {3, 4}}).
// Integers give int64, floating numbers float32, bools bool — PyTorch's inference.
#pragma once

#include <functional>
#include <initializer_list>
#include <vector>

#include <ember/core/tensor.h>

namespace ember {

// Nested braces of numbers, any depth 0–4 (and deeper): what ember::tensor accepts.
class NestedData {
 public:
  template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  NestedData(T value) : scalar_(value), is_scalar_(true) {}  // NOLINT
  NestedData(std::initializer_list<NestedData> children) : children_(children) {}  // NOLINT

  bool is_scalar() const { return is_scalar_; }
  Scalar scalar() const { return scalar_; }
  const std::vector<NestedData>& children() const { return children_; }

 private:
  Scalar scalar_;
  bool is_scalar_ = false;
  std::vector<NestedData> children_;
};

// Infers sizes and dtype from the nesting; ragged lists throw ShapeError
// ("expected sequence of length 2 at dim 1 (got 3)").
Tensor tensor(const NestedData& data, TensorOptions options = {});

Tensor zeros(IntArrayRef sizes, TensorOptions options = {});
Tensor ones(IntArrayRef sizes, TensorOptions options = {});
Tensor full(IntArrayRef sizes, Scalar value, TensorOptions options = {});  // dtype from value if unset
Tensor arange(Scalar end, TensorOptions options = {});
Tensor arange(Scalar start, Scalar end, Scalar step = 1, TensorOptions options = {});
Tensor linspace(double start, double end, std::int64_t steps, TensorOptions options = {});
Tensor eye(std::int64_t n, std::optional<std::int64_t> m = std::nullopt, TensorOptions options = {});
Tensor empty_like(const Tensor& other, std::optional<TensorOptions> options = std::nullopt);
Tensor zeros_like(const Tensor& other, std::optional<TensorOptions> options = std::nullopt);
Tensor ones_like(const Tensor& other, std::optional<TensorOptions> options = std::nullopt);
Tensor full_like(const Tensor& other, Scalar value, std::optional<TensorOptions> options = std::nullopt);
// torch.empty_strided: an uninitialised tensor with the given strides over a fresh storage
// just large enough for its farthest element (strides may leave gaps or overlap). PyTorch's
// rules: a negative stride over two or more elements is a storage-size overflow; on a dim of
// at most one element it means "unspecified" and becomes that dim's contiguous stride.
Tensor empty_strided(IntArrayRef sizes, IntArrayRef strides, TensorOptions options = {});
// Wraps memory the caller owns (no copy). The deleter, if given, runs when the last view dies.
Tensor from_blob(void* data, IntArrayRef sizes, TensorOptions options = {},
                 std::function<void(void*)> deleter = {});
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, TensorOptions options = {},
                 std::function<void(void*)> deleter = {});

}  // namespace ember
