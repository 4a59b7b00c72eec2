// core/reference/embedding_loops.cpp — the reference loop of the embedding backward (plan:
// core/embedding_plan.h): the obviously-correct statement of what the CPU kernel
// (core/cpu/embedding_kernels.cpp) and the CUDA kernel compute, on the calling thread.
//
//   grad_weight = 0
//   for each position p in order:  if indices[p] != padding_idx: grad_weight[indices[p]] += grad[p]
//
// Every element of a row is accumulated in input order from 0, the same order as the fast
// kernels (and PyTorch's CPU embedding_dense_backward), so they agree bit for bit.
#include <algorithm>
#include <cstdint>

#include <ember/core/backend.h>
#include <ember/core/element_functions.h>
#include <ember/core/dispatch.h>
#include <ember/core/reference/reference_kernels.h>

namespace ember::reference {

namespace {

template <class T>
void embedding_backward_typed(const EmbeddingBackwardPlan& plan) {
  const T* grad = static_cast<const T*>(plan.grad);
  T* grad_weight = static_cast<T*>(plan.grad_weight);
  std::fill(grad_weight, grad_weight + plan.num_weights * plan.dim, T(0));
  for (std::int64_t p = 0; p < plan.count; ++p) {
    const std::int64_t row = plan.indices[p];
    if (row == plan.padding_idx) continue;
    const auto add = element::in_opmath<T>(element::Add<opmath_t<T>>{});  // 16-bit: rounds every addition
    for (std::int64_t i = 0; i < plan.dim; ++i)
      grad_weight[row * plan.dim + i] = add(grad_weight[row * plan.dim + i], grad[p * plan.dim + i]);
  }
}

}  // namespace

void embedding_backward(const EmbeddingBackwardPlan& plan) {
  EMBER_DISPATCH_FLOATING_AND_REDUCED(plan.dtype, embedding_backward_typed<scalar_t>(plan));
}

EMBER_REGISTER_KERNEL(::ember::embedding_backward_kernel, CPUReference, embedding_backward);

}  // namespace ember::reference
