// core/type_promotion.cpp — torch.result_type (see core/type_promotion.h for the rules).
#include <ember/core/type_promotion.h>

#include <optional>

#include <ember/core/native.h>

namespace ember {

namespace {

// The three priority classes of core/type_promotion.h, each promoted on its own.
struct ResultTypeState {
  std::optional<DType> dimensioned;
  std::optional<DType> zero_dim;
  std::optional<DType> wrapped_number;
};

void promote_into(std::optional<DType>& slot, DType dtype) {
  slot = slot ? promote_types(*slot, dtype) : dtype;
}

// A wrapped number carries float64/int64/bool (what a C++ double/int/bool is), but in
// promotion a floating number stands for the default float dtype (float32), like PyTorch.
DType wrapped_number_dtype(DType dtype) { return is_floating_point(dtype) ? default_float_dtype() : dtype; }

void update_state(ResultTypeState& state, const Tensor& tensor) {
  if (!tensor.defined()) return;
  if (tensor.is_wrapped_number()) {
    promote_into(state.wrapped_number, wrapped_number_dtype(tensor.dtype()));
  } else if (tensor.dim() == 0) {
    promote_into(state.zero_dim, tensor.dtype());
  } else {
    promote_into(state.dimensioned, tensor.dtype());
  }
}

// Merges a lower-priority class into a higher one: the lower class counts only if it is of
// a higher category (bool < integral < floating) than the higher class.
std::optional<DType> combine_categories(std::optional<DType> higher, std::optional<DType> lower) {
  if (!higher) return lower;
  if (!lower) return higher;
  if (is_floating_point(*higher)) return higher;  // nothing ranks above floating
  // bool is raised by anything; integral only by floating.
  if (*higher == DType::Bool || is_floating_point(*lower)) return promote_types(*higher, *lower);
  return higher;
}

DType finish(const ResultTypeState& state) {
  std::optional<DType> result =
      combine_categories(state.dimensioned, combine_categories(state.zero_dim, state.wrapped_number));
  EMBER_CHECK(result.has_value(), ValueError, "result_type: expected at least one tensor operand");
  return *result;
}

}  // namespace

DType result_type(const std::vector<Tensor>& operands) {
  ResultTypeState state;
  for (const Tensor& operand : operands) update_state(state, operand);
  return finish(state);
}

DType result_type(const Tensor& a, const Tensor& b) {
  ResultTypeState state;
  update_state(state, a);
  update_state(state, b);
  return finish(state);
}

DType result_type(const Tensor& a, Scalar b) {
  ResultTypeState state;
  update_state(state, a);
  DType scalar_dtype = b.is_floating_point() ? DType::Float64 : b.is_bool() ? DType::Bool : DType::Int64;
  promote_into(state.wrapped_number, wrapped_number_dtype(scalar_dtype));
  return finish(state);
}

bool can_cast(DType from, DType to) {
  // Category order: bool (0) < integral (1) < floating (2). Only going down is refused.
  auto category = [](DType dtype) { return dtype == DType::Bool ? 0 : is_floating_point(dtype) ? 2 : 1; };
  return category(from) <= category(to);
}

PromotedOperands promote_operands(const std::vector<Tensor>& operands) {
  PromotedOperands result{result_type(operands), {}};
  result.tensors.reserve(operands.size());
  for (const Tensor& operand : operands) {
    result.tensors.push_back(operand.defined() ? native::to_dtype(operand, result.dtype) : operand);
  }
  return result;
}

}  // namespace ember
