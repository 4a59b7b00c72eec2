// cuda/kernels/elementwise.cuh — ONE templated kernel family for every elementwise op.
//
// fill, casts/copies, unary, binary and where are all "out[i] = f(in_1[i], ..., in_n[i])"
// (n = 0..3) over a StridedPlan (core/strided_index.h). A new op is a new functor F (see
// elementwise_ops.cuh); this file never changes. Two paths:
//   * vectorised: every operand contiguous and aligned — each thread moves V elements with
//     one 16-byte access for the widest operand (V = 16 / widest element size), in a
//     grid-stride loop over the vectors; the < V leftover elements go to the first threads;
//   * strided: one element per thread per step; operand_offsets() turns the linear index
//     into every operand's offset at once, in 32-bit arithmetic where the index fits
//     (broadcast operands have stride 0).
// Bound: memory bandwidth — (sum of operand element sizes) × numel bytes, no reuse.
// Tutorial: §2 (tensor operations), run on the GPU as in the appendix.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include <ember/core/strided_index.h>
#include <ember/cuda/kernels/device_support.cuh>

EMBER_KERNELS_BEGIN

constexpr int kElementwiseThreads = 256;
constexpr int kVectorBytes = 16;

template <std::size_t I, class... T> struct TypeAt;
template <class First, class... Rest> struct TypeAt<0, First, Rest...> { using type = First; };
template <std::size_t I, class First, class... Rest> struct TypeAt<I, First, Rest...> {
  using type = typename TypeAt<I - 1, Rest...>::type;
};

// How many elements one 16-byte access of the widest operand covers.
template <class Out, class... In>
constexpr int vector_width() {
  std::size_t widest = sizeof(Out);
  ((widest = sizeof(In) > widest ? sizeof(In) : widest), ...);
  return static_cast<int>(kVectorBytes / widest);
}

// V elements that load and store as one aligned access.
template <class T, int V>
struct alignas(sizeof(T) * V) Vector {
  T lane[V];
};

template <class T, int V>
EMBER_DEVICE Vector<T, V> load_vector(const void* base, std::int64_t v) {
  return load_aligned(reinterpret_cast<const Vector<T, V>*>(base) + v);
}

// Linear index i through the plan's strides: every operand's offset from one pass over the
// digits (operand_offsets), then the inputs read and the output written.
template <class F, class Out, class... In, std::size_t... K>
EMBER_DEVICE void strided_element(const StridedPlan& plan, const F& f, std::int64_t i, std::index_sequence<K...>) {
  std::int64_t offsets[sizeof...(In) + 1];
  operand_offsets(plan, i, offsets);
  static_cast<Out*>(plan.data[0])[offsets[0]] =
      f(static_cast<const typename TypeAt<K, In...>::type*>(plan.data[K + 1])[offsets[K + 1]]...);
}

template <class F, class Out, class... In, std::size_t... K>
EMBER_DEVICE void contiguous_element(const StridedPlan& plan, const F& f, std::int64_t i, std::index_sequence<K...>) {
  static_cast<Out*>(plan.data[0])[i] = f(static_cast<const typename TypeAt<K, In...>::type*>(plan.data[K + 1])[i]...);
}

// General path: any strides, any broadcasting.
template <class F, class Out, class... In>
EMBER_GLOBAL void elementwise_strided_kernel(StridedPlan plan, F f) {
  for (std::int64_t i = global_thread_index(); i < plan.numel; i += grid_thread_count())
    strided_element<F, Out, In...>(plan, f, i, std::index_sequence_for<In...>{});
}

// Fast path: all operands contiguous and aligned to their vector size.
template <class F, class Out, class... In>
EMBER_GLOBAL void elementwise_vector_kernel(StridedPlan plan, F f) {
  constexpr int V = vector_width<Out, In...>();
  constexpr std::size_t arity = sizeof...(In);
  const std::int64_t vectors = plan.numel / V;
  for (std::int64_t v = global_thread_index(); v < vectors; v += grid_thread_count()) {
    Vector<Out, V> result;
    // One access per operand, then V independent lane computations from registers.
    if constexpr (arity == 0) {
      for (int j = 0; j < V; ++j) result.lane[j] = f();
    } else if constexpr (arity == 1) {
      auto a = load_vector<typename TypeAt<0, In...>::type, V>(plan.data[1], v);
      for (int j = 0; j < V; ++j) result.lane[j] = f(a.lane[j]);
    } else if constexpr (arity == 2) {
      auto a = load_vector<typename TypeAt<0, In...>::type, V>(plan.data[1], v);
      auto b = load_vector<typename TypeAt<1, In...>::type, V>(plan.data[2], v);
      for (int j = 0; j < V; ++j) result.lane[j] = f(a.lane[j], b.lane[j]);
    } else {
      static_assert(arity == 3, "elementwise kernels take at most 3 inputs");
      auto a = load_vector<typename TypeAt<0, In...>::type, V>(plan.data[1], v);
      auto b = load_vector<typename TypeAt<1, In...>::type, V>(plan.data[2], v);
      auto c = load_vector<typename TypeAt<2, In...>::type, V>(plan.data[3], v);
      for (int j = 0; j < V; ++j) result.lane[j] = f(a.lane[j], b.lane[j], c.lane[j]);
    }
    store_aligned(reinterpret_cast<Vector<Out, V>*>(plan.data[0]) + v, result);
  }
  // The tail that does not fill a whole vector: one element for each of the first threads.
  const std::int64_t tail_index = vectors * V + global_thread_index();
  if (tail_index < plan.numel)
    contiguous_element<F, Out, In...>(plan, f, tail_index, std::index_sequence_for<In...>{});
}

// True when operand k's pointer is aligned for a V-wide access of its element type.
template <class T, int V>
inline bool vector_aligned(const void* pointer) {
  return reinterpret_cast<std::uintptr_t>(pointer) % (sizeof(T) * V) == 0;
}

template <class Out, class... In, std::size_t... K>
inline bool plan_vector_aligned(const StridedPlan& plan, std::index_sequence<K...>) {
  constexpr int V = vector_width<Out, In...>();
  return vector_aligned<Out, V>(plan.data[0]) &&
         (vector_aligned<typename TypeAt<K, In...>::type, V>(plan.data[K + 1]) && ...);
}

// Host side: picks the path and launches. plan.data must be device pointers (or host
// pointers under the emulator). The plan travels to the GPU by value as a kernel argument.
template <class Out, class... In, class F>
void launch_elementwise(const StridedPlan& plan, F f, cudaStream_t stream) {
  if (plan.numel == 0) return;
  constexpr int V = vector_width<Out, In...>();
  if (plan.contiguous && plan_vector_aligned<Out, In...>(plan, std::index_sequence_for<In...>{})) {
    const std::int64_t vectors = plan.numel / V;
    const std::int64_t tail = plan.numel - vectors * V;
    const std::int64_t work = vectors > tail ? vectors : tail;
    auto kernel = &elementwise_vector_kernel<F, Out, In...>;
    EMBER_LAUNCH(kernel, dim3(blocks_for(work, kElementwiseThreads)), dim3(kElementwiseThreads), stream, plan, f);
  } else {
    auto kernel = &elementwise_strided_kernel<F, Out, In...>;
    EMBER_LAUNCH(kernel, dim3(blocks_for(plan.numel, kElementwiseThreads)), dim3(kElementwiseThreads), stream, plan, f);
  }
}

EMBER_KERNELS_END
