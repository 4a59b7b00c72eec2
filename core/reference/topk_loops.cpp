// core/reference/topk_loops.cpp — the reference loop of topk (plan: core/topk_plan.h): one
// row after another on the calling thread.
//
//   for each row: pair every value with its index, select the k first by the order
//                 "NaN, then larger values" (or "smaller values, then NaN"), write them out
//
// The selection itself is the shared detail::select_topk_row: the order of equal values is
// part of the op's result (PyTorch's, from its standard-library selection), so the reference
// cannot use a simpler sort without returning different indices for ties.
#include <cstdint>
#include <vector>

#include <ember/core/backend.h>
#include <ember/core/dispatch.h>
#include <ember/core/reference/reference_kernels.h>

namespace ember::reference {

namespace {

template <class T>
void topk_typed(const TopkPlan& plan) {
  const T* input = static_cast<const T*>(plan.input);
  T* values = static_cast<T*>(plan.values);
  std::vector<std::pair<T, std::int64_t>> queue;
  for (std::int64_t s = 0; s < plan.slices; ++s) {
    detail::select_topk_row(input + s * plan.size, plan.size, plan.k, plan.largest, plan.sorted, queue,
                            values + s * plan.k, plan.indices + s * plan.k);
  }
}

}  // namespace

void topk(const TopkPlan& plan) {
  if (plan.k == 0) return;
  switch (plan.dtype) {
    case DType::UInt8: topk_typed<std::uint8_t>(plan); break;
    case DType::Int32: topk_typed<std::int32_t>(plan); break;
    case DType::Int64: topk_typed<std::int64_t>(plan); break;
    case DType::Float32: topk_typed<float>(plan); break;
    case DType::Float64: topk_typed<double>(plan); break;
    case DType::BFloat16: topk_typed<BFloat16>(plan); break;  // compared as floats: exact
    case DType::Float16: topk_typed<Half>(plan); break;
    case DType::Bool: throw NotImplementedError("topk does not support bool dtypes on CPU");
    default: detail::throw_dtype_not_implemented(plan.dtype);
  }
}

EMBER_REGISTER_KERNEL(::ember::topk_kernel, CPUReference, topk);

}  // namespace ember::reference
