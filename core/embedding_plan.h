// core/embedding_plan.h — the plain-data plan of the embedding-backward kernels (core/backend.h).
//
// Issue 21. An embedding looks rows up: out[p] = weight[indices[p]] (a gather, index_select).
// Its weight gradient sends each position's gradient row back to the row it read:
//   grad_weight[r] = Σ_{p : indices[p] == r, r != padding_idx} grad[p]
// summed in input order (p ascending) — the order PyTorch's CPU embedding_dense_backward
// adds in — so the fast CPU kernel (core/cpu/embedding_kernels.cpp), the reference loop
// (core/reference/embedding_loops.cpp) and the CUDA kernel (cuda/kernels/embedding.cuh) give
// the same bits, run after run: no kernel adds floats with atomics. The native layer
// (core/embedding.cpp) checks every argument and makes the operands contiguous; kernels only
// compute. Like core/fused_plans.h: POD, raw pointers, no ownership.
#pragma once

#include <cstdint>

#include <ember/core/dtype.h>

namespace ember {

struct EmbeddingBackwardPlan {
  const void* grad = nullptr;             // [count, dim], contiguous, dtype
  const std::int64_t* indices = nullptr;  // [count], contiguous, every value in [0, num_weights)
  void* grad_weight = nullptr;            // [num_weights, dim], contiguous: every element is written
  std::int64_t count = 0, dim = 0, num_weights = 0;
  // The row that gets a zero gradient whatever indexes it; a value outside [0, num_weights)
  // (PyTorch's -1) means none.
  std::int64_t padding_idx = -1;
  DType dtype = DType::Float32;  // float32 or float64
  int device = -1;               // as StridedPlan::device
};

}  // namespace ember
