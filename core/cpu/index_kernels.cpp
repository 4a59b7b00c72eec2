// core/cpu/index_kernels.cpp — CPU kernels for index_select, index_add, gather, scatter_add.
//
// Called through core/backend.h by core/indexing.cpp, which has already made every tensor
// contiguous, viewed it as [outer, size, inner] around the indexed dim (IndexPlan in
// core/strided_index.h) and checked that every index value is in range. So each kernel is
// three nested loops and nothing else.
//
// Threads: the outer slices never write to each other's output (an index only moves data
// along the middle dim), so parallel_for over `outer` needs no locks, even for the
// accumulating forms (index_add, scatter_add), where one slice may add twice to a row.
// index_select writes each output row once, so it splits the rows themselves.
#include <algorithm>
#include <cstdint>

#include <ember/core/cpu/cpu_kernels.h>
#include <ember/core/element_functions.h>
#include <ember/core/error.h>
#include <ember/core/parallel.h>

namespace ember::cpu {

namespace {

// How many outer slices each thread takes at least, so tiny ops stay on one thread.
std::int64_t outer_grain(const IndexPlan& plan) {
  std::int64_t per_slice = std::max<std::int64_t>(1, std::max(plan.index_count, plan.self_size) * plan.inner);
  return std::max<std::int64_t>(1, kDefaultGrainSize / per_slice);
}

// Sum of two elements in their own type (bool: logical or, like PyTorch's bool add).
template <class T>
T add_values(T a, T b) {
  return element::Add<T>{}(a, b);  // bool: or; integers wrap (core/element_functions.h)
}

// out[o, j, i] = in[o, index[j], i]: copy whole inner rows, one per selected index. Every
// output row is written once, so the threads split the output rows (o, j) — not only the
// outer slices, of which an embedding lookup (index_select on dim 0) has one.
template <class T>
void index_select_typed(const IndexPlan& plan) {
  const T* in = static_cast<const T*>(plan.source);
  T* out = static_cast<T*>(plan.output);
  const std::int64_t rows = plan.outer * plan.index_count;
  const std::int64_t grain = std::max<std::int64_t>(1, kDefaultGrainSize / std::max<std::int64_t>(plan.inner, 1));
  parallel_for(0, rows, grain, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t row = begin; row < end; ++row) {
      const std::int64_t o = row / plan.index_count, j = row % plan.index_count;
      const T* from = in + (o * plan.self_size + plan.index[j]) * plan.inner;
      std::copy(from, from + plan.inner, out + row * plan.inner);
    }
  });
}

// out[o, index[j], i] += src[o, j, i]
template <class T>
void index_add_typed(const IndexPlan& plan) {
  const T* src = static_cast<const T*>(plan.source);
  T* out = static_cast<T*>(plan.output);
  parallel_for(0, plan.outer, outer_grain(plan), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t o = begin; o < end; ++o) {
      for (std::int64_t j = 0; j < plan.index_count; ++j) {
        T* to = out + (o * plan.self_size + plan.index[j]) * plan.inner;
        const T* from = src + (o * plan.index_count + j) * plan.inner;
        for (std::int64_t i = 0; i < plan.inner; ++i) to[i] = add_values(to[i], from[i]);
      }
    }
  });
}

// out[o, j, i] = in[o, index[o, j, i], i]: the index has the output's full shape.
template <class T>
void gather_typed(const IndexPlan& plan) {
  const T* in = static_cast<const T*>(plan.source);
  T* out = static_cast<T*>(plan.output);
  parallel_for(0, plan.outer, outer_grain(plan), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t o = begin; o < end; ++o) {
      for (std::int64_t j = 0; j < plan.index_count; ++j) {
        const std::int64_t row = (o * plan.index_count + j) * plan.inner;
        for (std::int64_t i = 0; i < plan.inner; ++i) {
          out[row + i] = in[(o * plan.self_size + plan.index[row + i]) * plan.inner + i];
        }
      }
    }
  });
}

// out[o, index[o, j, i], i] += src[o, j, i]
template <class T>
void scatter_add_typed(const IndexPlan& plan) {
  const T* src = static_cast<const T*>(plan.source);
  T* out = static_cast<T*>(plan.output);
  parallel_for(0, plan.outer, outer_grain(plan), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t o = begin; o < end; ++o) {
      for (std::int64_t j = 0; j < plan.index_count; ++j) {
        const std::int64_t row = (o * plan.index_count + j) * plan.inner;
        for (std::int64_t i = 0; i < plan.inner; ++i) {
          T& to = out[(o * plan.self_size + plan.index[row + i]) * plan.inner + i];
          to = add_values(to, src[row + i]);
        }
      }
    }
  });
}

}  // namespace

void index_select(const IndexPlan& plan) { EMBER_DISPATCH_ALL_AND_REDUCED(plan.dtype, index_select_typed<scalar_t>(plan)); }
void index_add(const IndexPlan& plan) { EMBER_DISPATCH_ALL(plan.dtype, index_add_typed<scalar_t>(plan)); }
void gather(const IndexPlan& plan) { EMBER_DISPATCH_ALL_AND_REDUCED(plan.dtype, gather_typed<scalar_t>(plan)); }
void scatter_add(const IndexPlan& plan) { EMBER_DISPATCH_ALL(plan.dtype, scatter_add_typed<scalar_t>(plan)); }

EMBER_REGISTER_KERNEL(::ember::index_select_kernel, CPU, index_select);
EMBER_REGISTER_KERNEL(::ember::index_add_kernel, CPU, index_add);
EMBER_REGISTER_KERNEL(::ember::gather_kernel, CPU, gather);
EMBER_REGISTER_KERNEL(::ember::scatter_add_kernel, CPU, scatter_add);

}  // namespace ember::cpu
