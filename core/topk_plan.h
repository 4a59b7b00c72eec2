// core/topk_plan.h — the plain-data plan of the topk kernels (core/backend.h) and the one
// selection rule both CPU kernels apply to a row.
//
// Issue 21. topk(x, k, dim) keeps, for every slice along dim, the k largest (or smallest)
// values and where they were. The native layer (core/topk.cpp) moves dim last and makes the
// input contiguous, so a kernel sees `slices` rows of `size` values and writes `slices` rows
// of k values and k int64 indices.
//
// Which of several equal values comes first is not a matter of taste: text generation
// (multinomial without replacement, top-k sampling) returns those indices, and tests compare
// them with PyTorch's. PyTorch's CPU kernel selects with the C++ standard library — a partial
// sort when k * 64 <= size, otherwise nth_element and then a sort of the first k - 1 — over
// (value, index) pairs in index order, NaN ordered before every number (it counts as the
// largest). The order those algorithms leave equal values in is libstdc++'s, which PyTorch's
// Linux wheels and ember both use, so select_topk_row below runs the same algorithms with
// the same comparison and lands on the same order; a different selection (a stable sort, a
// heap of our own) would return other indices for ties. The fast kernel
// (core/cpu/topk_kernels.cpp) spreads rows over threads, the reference loop
// (core/reference/topk_loops.cpp) does one row after another; both call this function.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include <ember/core/dtype.h>

namespace ember {

struct TopkPlan {
  const void* input = nullptr;     // [slices, size], contiguous, dtype
  void* values = nullptr;          // [slices, k], contiguous, dtype
  std::int64_t* indices = nullptr; // [slices, k], contiguous
  std::int64_t slices = 0, size = 0, k = 0;  // 0 < k <= size
  bool largest = true;   // the k largest (else the k smallest)
  bool sorted = true;    // in order (else in whatever order the selection leaves them)
  DType dtype = DType::Float32;  // any but Bool
};

namespace detail {

template <class T>
bool topk_is_nan(T value) {
  if constexpr (is_reduced_float_v<T>) return std::isnan(static_cast<float>(value));
  else if constexpr (std::is_floating_point_v<T>) return std::isnan(value);
  else return false;
}

// One row: fills `values`/`indices` with its k chosen elements. `queue` is scratch, reused
// across rows by the caller.
template <class T>
void select_topk_row(const T* row, std::int64_t size, std::int64_t k, bool largest, bool sorted,
                     std::vector<std::pair<T, std::int64_t>>& queue, T* values, std::int64_t* indices) {
  using Entry = std::pair<T, std::int64_t>;
  queue.resize(static_cast<std::size_t>(size));
  for (std::int64_t i = 0; i < size; ++i) queue[static_cast<std::size_t>(i)] = {row[i], i};
  // "a goes before b": NaN is the largest value, so it leads for largest and trails otherwise.
  auto goes_first = [largest](const Entry& a, const Entry& b) {
    const bool a_nan = topk_is_nan(a.first), b_nan = topk_is_nan(b.first);
    if (largest) return (a_nan && !b_nan) || a.first > b.first;
    return (!a_nan && b_nan) || a.first < b.first;
  };
  const auto first = queue.begin();
  if (k * 64 <= size) {
    std::partial_sort(first, first + k, queue.end(), goes_first);  // always leaves them sorted
  } else {
    std::nth_element(first, first + (k - 1), queue.end(), goes_first);
    if (sorted) std::sort(first, first + (k - 1), goes_first);  // the k-th is already in place
  }
  for (std::int64_t j = 0; j < k; ++j) {
    values[j] = queue[static_cast<std::size_t>(j)].first;
    indices[j] = queue[static_cast<std::size_t>(j)].second;
  }
}

}  // namespace detail

}  // namespace ember
