// core/reference/index_loops.cpp — the reference loops of index_select, index_add, gather
// and scatter_add.
//
// core/indexing.cpp has made every tensor contiguous, viewed it as [outer, size, inner]
// around the indexed dim (IndexPlan, core/strided_index.h) and checked every index, so
// each kernel is three nested loops over (o, j, i):
//   index_select: out[o, j, i]             = in[o, index[j], i]
//   index_add:    out[o, index[j], i]      += src[o, j, i]        (out already holds self)
//   gather:       out[o, j, i]             = in[o, index[o, j, i], i]
//   scatter_add:  out[o, index[o, j, i], i] += src[o, j, i]       (out already holds self)
// The additions use element::Add (bool: logical or; integers wrap). The fast kernels
// (core/cpu/index_kernels.cpp) are the same loops with the outer slices shared among
// threads; a slice only ever writes its own output rows, so the results are the same bits.
#include <cstdint>

#include <ember/core/dispatch.h>
#include <ember/core/element_functions.h>
#include <ember/core/error.h>
#include <ember/core/reference/reference_kernels.h>

namespace ember::reference {

namespace {

// Linear position of [o, middle, i] in a contiguous [outer, middle_size, inner] tensor.
std::int64_t position(const IndexPlan& plan, std::int64_t o, std::int64_t middle, std::int64_t middle_size,
                      std::int64_t i) {
  return (o * middle_size + middle) * plan.inner + i;
}

template <class T>
void index_select_typed(const IndexPlan& plan) {
  const T* in = static_cast<const T*>(plan.source);
  T* out = static_cast<T*>(plan.output);
  for (std::int64_t o = 0; o < plan.outer; ++o)
    for (std::int64_t j = 0; j < plan.index_count; ++j)
      for (std::int64_t i = 0; i < plan.inner; ++i)
        out[position(plan, o, j, plan.index_count, i)] = in[position(plan, o, plan.index[j], plan.self_size, i)];
}

template <class T>
void index_add_typed(const IndexPlan& plan) {
  const T* src = static_cast<const T*>(plan.source);
  T* out = static_cast<T*>(plan.output);
  for (std::int64_t o = 0; o < plan.outer; ++o)
    for (std::int64_t j = 0; j < plan.index_count; ++j)
      for (std::int64_t i = 0; i < plan.inner; ++i) {
        T& to = out[position(plan, o, plan.index[j], plan.self_size, i)];
        to = element::Add<T>{}(to, src[position(plan, o, j, plan.index_count, i)]);
      }
}

template <class T>
void gather_typed(const IndexPlan& plan) {
  const T* in = static_cast<const T*>(plan.source);
  T* out = static_cast<T*>(plan.output);
  for (std::int64_t o = 0; o < plan.outer; ++o)
    for (std::int64_t j = 0; j < plan.index_count; ++j)
      for (std::int64_t i = 0; i < plan.inner; ++i) {
        const std::int64_t here = position(plan, o, j, plan.index_count, i);
        out[here] = in[position(plan, o, plan.index[here], plan.self_size, i)];
      }
}

template <class T>
void scatter_add_typed(const IndexPlan& plan) {
  const T* src = static_cast<const T*>(plan.source);
  T* out = static_cast<T*>(plan.output);
  for (std::int64_t o = 0; o < plan.outer; ++o)
    for (std::int64_t j = 0; j < plan.index_count; ++j)
      for (std::int64_t i = 0; i < plan.inner; ++i) {
        const std::int64_t here = position(plan, o, j, plan.index_count, i);
        T& to = out[position(plan, o, plan.index[here], plan.self_size, i)];
        to = element::Add<T>{}(to, src[here]);
      }
}

}  // namespace

void index_select(const IndexPlan& plan) { EMBER_DISPATCH_ALL_AND_REDUCED(plan.dtype, index_select_typed<scalar_t>(plan)); }
void index_add(const IndexPlan& plan) { EMBER_DISPATCH_ALL(plan.dtype, index_add_typed<scalar_t>(plan)); }
void gather(const IndexPlan& plan) { EMBER_DISPATCH_ALL_AND_REDUCED(plan.dtype, gather_typed<scalar_t>(plan)); }
void scatter_add(const IndexPlan& plan) { EMBER_DISPATCH_ALL(plan.dtype, scatter_add_typed<scalar_t>(plan)); }

// The CPUReference slots (core/dispatch.h): served when EMBER_KERNELS=reference.
EMBER_REGISTER_KERNEL(::ember::index_select_kernel, CPUReference, index_select);
EMBER_REGISTER_KERNEL(::ember::index_add_kernel, CPUReference, index_add);
EMBER_REGISTER_KERNEL(::ember::gather_kernel, CPUReference, gather);
EMBER_REGISTER_KERNEL(::ember::scatter_add_kernel, CPUReference, scatter_add);

}  // namespace ember::reference
