// core/cpu/embedding_kernels.cpp — the CPU's embedding backward (core/embedding_plan.h):
// grad_weight[r] = Σ grad[p] over the positions p that read row r, in input order.
//
// Issue 21. Strategy: a stable counting sort of the positions by row (count per row, prefix
// sum, then one pass over the positions in order, so each row's list is ascending), then
// every row sums its own list, rows spread over threads. A row is written by exactly one
// task, so there are no float atomics and no locks, and each element of a row is
// accumulated in input order starting from 0 — the order of the reference loop
// (core/reference/embedding_loops.cpp) and of PyTorch's CPU embedding_dense_backward, so all
// three agree bit for bit, whatever the thread count. A task is a row times a block of
// kColumnBlock columns, so a few hot rows (all positions reading one row) still spread over
// threads, and each task's inner loop is a contiguous, vectorisable add.
// Cost: O(count + num_weights) for the sort (8 bytes per position and per row of scratch),
// then one read of grad and one write of grad_weight.
#include <algorithm>
#include <cstdint>
#include <vector>

#include <ember/core/backend.h>
#include <ember/core/element_functions.h>
#include <ember/core/cpu/cpu_kernels.h>
#include <ember/core/dispatch.h>
#include <ember/core/parallel.h>

namespace ember::cpu {

namespace {

constexpr std::int64_t kColumnBlock = 256;

// The positions grouped by row: row r's positions are order[row_start[r] .. row_start[r + 1]),
// ascending.
struct PositionsByRow {
  std::vector<std::int64_t> row_start;
  std::vector<std::int64_t> order;
};

PositionsByRow group_by_row(const EmbeddingBackwardPlan& plan) {
  PositionsByRow grouped;
  grouped.row_start.assign(static_cast<std::size_t>(plan.num_weights) + 1, 0);
  for (std::int64_t p = 0; p < plan.count; ++p) ++grouped.row_start[plan.indices[p] + 1];
  for (std::int64_t r = 0; r < plan.num_weights; ++r) grouped.row_start[r + 1] += grouped.row_start[r];
  std::vector<std::int64_t> next(grouped.row_start.begin(), grouped.row_start.end() - 1);
  grouped.order.resize(static_cast<std::size_t>(plan.count));
  for (std::int64_t p = 0; p < plan.count; ++p) grouped.order[next[plan.indices[p]]++] = p;
  return grouped;
}

template <class T>
void embedding_backward_typed(const EmbeddingBackwardPlan& plan) {
  const T* grad = static_cast<const T*>(plan.grad);
  T* grad_weight = static_cast<T*>(plan.grad_weight);
  const std::int64_t dim = plan.dim;
  const PositionsByRow grouped = group_by_row(plan);
  const std::int64_t column_blocks = (dim + kColumnBlock - 1) / kColumnBlock;
  const std::int64_t tasks = plan.num_weights * column_blocks;
  // About kDefaultGrainSize additions per chunk of tasks (plus the zeroing of empty rows).
  const std::int64_t additions_per_task = (plan.count / std::max<std::int64_t>(plan.num_weights, 1) + 1) *
                                          std::min(dim, kColumnBlock);
  const std::int64_t grain = std::max<std::int64_t>(1, kDefaultGrainSize / std::max<std::int64_t>(additions_per_task, 1));
  parallel_for(0, tasks, grain, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t task = begin; task < end; ++task) {
      const std::int64_t row = task / column_blocks;
      const std::int64_t first = (task % column_blocks) * kColumnBlock;
      const std::int64_t width = std::min(kColumnBlock, dim - first);
      T* out = grad_weight + row * dim + first;
      std::fill(out, out + width, T(0));
      if (row == plan.padding_idx) continue;
      for (std::int64_t k = grouped.row_start[row]; k < grouped.row_start[row + 1]; ++k) {
        const T* from = grad + grouped.order[k] * dim + first;
        // 16-bit floats: one rounding per addition, in position order, as PyTorch's index_add_.
        const auto add = element::in_opmath<T>(element::Add<opmath_t<T>>{});
        for (std::int64_t i = 0; i < width; ++i) out[i] = add(out[i], from[i]);
      }
    }
  });
}

}  // namespace

void embedding_backward(const EmbeddingBackwardPlan& plan) {
  if (plan.num_weights == 0 || plan.dim == 0) return;
  EMBER_DISPATCH_FLOATING_AND_REDUCED(plan.dtype, embedding_backward_typed<scalar_t>(plan));
}

EMBER_REGISTER_KERNEL(::ember::embedding_backward_kernel, CPU, embedding_backward);

}  // namespace ember::cpu
