// core/type_promotion.h — which dtype an op computes in (PyTorch: torch.result_type).
//
// Tutorial §2.2 ("tensor data types"). When an op mixes dtypes, PyTorch does not simply take
// the widest one. Operands are ranked in three priority classes:
//   1. dimensioned tensors (dim() > 0),
//   2. zero-dimensional tensors (dim() == 0),
//   3. wrapped numbers: C++/Python scalars such as the 2.5 in `x * 2.5`
//      (TensorImpl::is_wrapped_number, made by ember::scalar_to_tensor).
// Within a class the dtypes are promoted normally (core/dtype.h promote_types). A lower class
// can only raise the *category* (bool < integral < floating) of the higher one; when it does,
// the two are promoted together, and a wrapped floating number counts as the default float
// (float32), a wrapped integer as int64. Examples, all checked against PyTorch:
//   int64 tensor   + 2.5              -> float32   (wrapped float raises the category)
//   float32 tensor + float64 0-d      -> float32   (same category: the 0-d tensor is ignored)
//   int32 tensor   + int64 0-d        -> int32
//   int32 tensor   + float64 0-d      -> float64   (category raised: promote(int32, float64))
//   bool tensor    + 3                -> int64
// The native ops (core/elementwise.cpp) cast their inputs to this dtype before calling a
// backend, so every kernel sees operands of one dtype.
#pragma once

#include <vector>

#include <ember/core/tensor.h>

namespace ember {

// torch.result_type over any number of operands (undefined tensors are skipped).
DType result_type(const std::vector<Tensor>& operands);
DType result_type(const Tensor& a, const Tensor& b);
// A Scalar ranks like a wrapped number.
DType result_type(const Tensor& a, Scalar b);

// torch.can_cast(from, to): may an op that computes in `from` write into a `to` tensor?
// Only a drop of category is refused (floating -> integral, anything non-bool -> bool).
bool can_cast(DType from, DType to);

// The operands cast to their result_type (a tensor that already has it is passed through,
// not copied), plus that dtype.
struct PromotedOperands {
  DType dtype;
  std::vector<Tensor> tensors;
};
PromotedOperands promote_operands(const std::vector<Tensor>& operands);

}  // namespace ember
