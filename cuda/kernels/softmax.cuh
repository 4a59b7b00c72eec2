// cuda/kernels/softmax.cuh — softmax / log_softmax over the middle dim of [outer, dim, inner].
//
// One block per row (a row = the `dim` elements for one (outer, inner) pair). Pass 1 is an
// *online* max-and-sum: each thread keeps (m, s) with s = Σ exp(x - m), rescaling s when a
// larger x arrives, so the row is read once to get both; the threads' pairs are merged
// with block_reduce using (m, s) ⊕ (m', s') = (M, s·e^(m-M) + s'·e^(m'-M)), M = max(m, m').
// Pass 2 writes exp(x - m) / s, or x - m - log(s) for log_softmax. Subtracting the max
// keeps exp() from overflowing (tutorial §3 on numerically stable softmax).
// Bound: memory bandwidth — the row is read twice and written once (3 × itemsize × numel).
#pragma once

#include <cstdint>

#include <ember/core/error.h>
#include <ember/core/strided_index.h>
#include <ember/cuda/kernels/block_reduce.cuh>
#include <ember/core/element_math.h>

EMBER_KERNELS_BEGIN

template <class T>
struct MaxSum {
  T max;  // -inf when the partial has seen no element
  T sum;  // Σ exp(x - max)
  EMBER_DEVICE MaxSum shuffle_down(unsigned delta) const {
    return MaxSum{warp_shfl_down(max, delta), warp_shfl_down(sum, delta)};
  }
};

// exp(x - m), with the convention that a partial whose max is -inf contributes 0 (it saw
// no finite element; -inf - -inf would otherwise be NaN).
template <class T>
EMBER_DEVICE T rescale(T x, T m) {
  if (x == -INFINITY) return T(0);
  return math::exp(x - m);
}

template <class T>
struct MaxSumCombine {
  EMBER_DEVICE MaxSum<T> operator()(MaxSum<T> a, MaxSum<T> b) const {
    if (math::isnan(a.max) || math::isnan(b.max)) return {a.max + b.max, a.sum + b.sum};  // NaN spreads
    T m = a.max > b.max ? a.max : b.max;
    return {m, a.sum * rescale(a.max, m) + b.sum * rescale(b.max, m)};
  }
};

template <class T>
EMBER_GLOBAL void softmax_kernel(SoftmaxPlan plan, bool log) {
  EMBER_SHARED_ARRAY(MaxSum<T>, scratch, kMaxBlockReduceWarps + 1);
  const MaxSumCombine<T> combine;
  const MaxSum<T> identity{static_cast<T>(-INFINITY), T(0)};
  const std::int64_t rows = plan.outer * plan.inner;
  for (std::int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const std::int64_t o = row / plan.inner, i = row % plan.inner;
    const std::int64_t base = o * plan.dim * plan.inner + i;
    const T* in = static_cast<const T*>(plan.input) + base;
    T* out = static_cast<T*>(plan.output) + base;
    MaxSum<T> partial = identity;
    for (std::int64_t d = threadIdx.x; d < plan.dim; d += blockDim.x)
      partial = combine(partial, MaxSum<T>{in[d * plan.inner], T(1)});
    const MaxSum<T> total = block_reduce(partial, combine, identity, scratch);
    const T log_sum = math::log(total.sum);
    for (std::int64_t d = threadIdx.x; d < plan.dim; d += blockDim.x) {
      const T shifted = in[d * plan.inner] - total.max;
      out[d * plan.inner] = log ? shifted - log_sum : math::exp(shifted) / total.sum;
    }
  }
}

inline void dispatch_softmax(const SoftmaxPlan& plan, bool log, cudaStream_t stream) {
  if (plan.outer * plan.inner * plan.dim == 0) return;
  const int threads = reduce_block_threads(plan.dim);
  EMBER_DISPATCH_FLOATING(plan.dtype, {
    auto kernel = &softmax_kernel<scalar_t>;
    EMBER_LAUNCH(kernel, dim3(blocks_for(plan.outer * plan.inner, 1)), dim3(threads), stream, plan, log);
  });
}

EMBER_KERNELS_END
