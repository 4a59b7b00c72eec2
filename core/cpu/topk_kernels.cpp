// core/cpu/topk_kernels.cpp — the CPU's topk (plan and selection rule: core/topk_plan.h).
//
// Issue 21. Strategy: rows are independent, so they are spread over threads (a chunk of
// rows per task, each task with its own scratch queue); inside a row, the selection is the
// standard-library one PyTorch uses, which fixes the order of equal values. Cost per row:
// O(size + k log k) for nth_element then a sort, O(size log k) for the partial sort PyTorch
// picks when k is small (k * 64 <= size).
#include <algorithm>
#include <cstdint>
#include <vector>

#include <ember/core/backend.h>
#include <ember/core/cpu/cpu_kernels.h>
#include <ember/core/dispatch.h>
#include <ember/core/parallel.h>

namespace ember::cpu {

namespace {

template <class T>
void topk_typed(const TopkPlan& plan) {
  const T* input = static_cast<const T*>(plan.input);
  T* values = static_cast<T*>(plan.values);
  // About kDefaultGrainSize elements looked at per task.
  const std::int64_t grain = std::max<std::int64_t>(1, kDefaultGrainSize / std::max<std::int64_t>(plan.size, 1));
  parallel_for(0, plan.slices, grain, [&](std::int64_t begin, std::int64_t end) {
    std::vector<std::pair<T, std::int64_t>> queue;
    for (std::int64_t s = begin; s < end; ++s) {
      detail::select_topk_row(input + s * plan.size, plan.size, plan.k, plan.largest, plan.sorted, queue,
                              values + s * plan.k, plan.indices + s * plan.k);
    }
  });
}

}  // namespace

void topk(const TopkPlan& plan) {
  if (plan.slices == 0 || plan.k == 0) return;
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

EMBER_REGISTER_KERNEL(::ember::topk_kernel, CPU, topk);

}  // namespace ember::cpu
