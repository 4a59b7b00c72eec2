// cuda/kernels/index.cuh — index_select, index_add, gather, scatter_add over an IndexPlan.
//
// Tensors are contiguous [outer, size, inner] (core/strided_index.h explains the forms).
// Strategy: one thread per element of the *small* side (the output for select/gather, the
// source for the add forms), grid-stride; the index read is the only indirection.
//   select / gather:  a pure gather — each thread reads one element and writes one.
//   index_add / scatter_add: several source elements may land on one output element, so
//   the accumulation is an atomicAdd. Floating-point atomics make the *order* of additions
//   (and so the last bits of the result) vary between runs; PyTorch's CUDA scatter_add has
//   the same property and documents it as nondeterministic.
// Bound: memory bandwidth (numel × (2 itemsize + 8) bytes), plus atomic contention on
// repeated indices for the add forms. Bounds of index values are checked by native::.
#pragma once

#include <cstdint>

#include <ember/core/error.h>
#include <ember/core/strided_index.h>
#include <ember/cuda/kernels/device_support.cuh>

EMBER_KERNELS_BEGIN

constexpr int kIndexThreads = 256;

enum class IndexKind : int { Select, Add, Gather, ScatterAdd };

template <class T>
EMBER_GLOBAL void index_kernel(IndexPlan plan, IndexKind kind) {
  const T* source = static_cast<const T*>(plan.source);
  T* output = static_cast<T*>(plan.output);
  const std::int64_t total = plan.outer * plan.index_count * plan.inner;
  for (std::int64_t e = global_thread_index(); e < total; e += grid_thread_count()) {
    // e walks the [outer, index_count, inner] side: (o, j, i).
    const std::int64_t i = e % plan.inner;
    const std::int64_t j = (e / plan.inner) % plan.index_count;
    const std::int64_t o = e / (plan.inner * plan.index_count);
    const bool full_index = kind == IndexKind::Gather || kind == IndexKind::ScatterAdd;
    const std::int64_t target = full_index ? plan.index[e] : plan.index[j];
    const std::int64_t self_offset = (o * plan.self_size + target) * plan.inner + i;
    switch (kind) {
      case IndexKind::Select:
      case IndexKind::Gather: output[e] = source[self_offset]; break;
      case IndexKind::Add:
      case IndexKind::ScatterAdd: atomic_add(output + self_offset, source[e]); break;
    }
  }
}

inline void dispatch_index(IndexKind kind, const IndexPlan& plan, cudaStream_t stream) {
  const std::int64_t total = plan.outer * plan.index_count * plan.inner;
  if (total == 0) return;
  EMBER_DISPATCH_ALL(plan.dtype, {
    auto kernel = &index_kernel<scalar_t>;
    EMBER_LAUNCH(kernel, dim3(blocks_for(total, kIndexThreads)), dim3(kIndexThreads), stream, plan, kind);
  });
}

EMBER_KERNELS_END
