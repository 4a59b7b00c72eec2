// tests/cuda/cuda_test_support.h — helpers for the CUDA tests: plans over host buffers for
// the emulated kernels, comparison with the CPU backend, and the GPU-skip convention.
//
// The emulated kernels (cuda/kernels/*.cuh compiled as plain C++) read and write ordinary
// host memory, so each test builds the same plan twice — once over buffers for the
// emulated kernel, once over buffers for core's CPU kernel (core/cpu/cpu_kernels.h) — and
// compares the outputs. Tests that need a real GPU start with EMBER_REQUIRE_GPU(): without
// one they report themselves skipped (exit code 4 when run alone, which CTest shows as
// skipped via SKIP_RETURN_CODE 4 — see test_gpu_skip.cpp).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <ember/core/cuda_hooks.h>
#include <ember/core/strided_index.h>

#include "test_support.h"

namespace ember::testing {

// The odd sizes every kernel is run on (warp and block edges on both sides).
inline const std::vector<std::int64_t>& odd_sizes() {
  static const std::vector<std::int64_t> sizes{1, 7, 31, 33, 1000};
  return sizes;
}

// A byte buffer with spare room in front, so a test can misalign on purpose.
struct HostBuffer {
  std::vector<std::uint64_t> storage;  // 8-byte units: the base is 16-byte aligned by malloc
  std::size_t itemsize = 0;
  HostBuffer(std::int64_t elements, std::size_t item) : storage((elements * item) / 8 + 4, 0), itemsize(item) {}
  void* at(std::int64_t element) { return reinterpret_cast<char*>(storage.data()) + element * itemsize; }
};

// Host storage for n values of T. std::vector<bool> packs bits, so bools are kept as one
// byte each (0 or 1), which is exactly the layout of ember's Bool dtype.
template <class T>
using HostVector = std::vector<std::conditional_t<std::is_same_v<T, bool>, std::uint8_t, T>>;

// Random values of type T: floats in [low, high), integers in [low, high].
template <class T>
HostVector<T> random_values(std::int64_t n, double low, double high, unsigned seed) {
  std::mt19937 engine(seed);
  HostVector<T> values(static_cast<std::size_t>(n));
  for (auto& v : values) {
    if constexpr (std::is_same_v<T, bool>) v = static_cast<std::uint8_t>(engine() & 1);
    else if constexpr (std::is_floating_point_v<T>) v = static_cast<T>(std::uniform_real_distribution<double>(low, high)(engine));
    else v = static_cast<T>(std::uniform_int_distribution<long long>(static_cast<long long>(low), static_cast<long long>(high))(engine));
  }
  return values;
}

// A plan over explicit operands. sizes and strides are given innermost first, in elements.
inline StridedPlan make_plan(std::vector<std::int64_t> sizes_inner_first,
                             std::vector<std::vector<std::int64_t>> strides, std::vector<void*> data,
                             std::vector<DType> dtypes, bool contiguous) {
  StridedPlan plan;
  plan.ndim = static_cast<int>(sizes_inner_first.size());
  plan.num_operands = static_cast<int>(data.size());
  plan.numel = 1;
  for (int d = 0; d < plan.ndim; ++d) {
    plan.sizes[d] = sizes_inner_first[d];
    plan.numel *= sizes_inner_first[d];
  }
  for (int k = 0; k < plan.num_operands; ++k) {
    plan.data[k] = data[k];
    plan.dtypes[k] = dtypes[k];
    for (int d = 0; d < plan.ndim; ++d) plan.strides[k][d] = strides[k][d];
  }
  plan.contiguous = contiguous;
  return plan;
}

// Elementwise closeness as torch.allclose (rtol, atol), NaNs equal.
template <class T>
bool values_close(T a, T b, double rtol = 1e-5, double atol = 1e-6) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    if (std::isinf(a) || std::isinf(b)) return a == b;
    return std::fabs(static_cast<double>(a) - static_cast<double>(b)) <= atol + rtol * std::fabs(static_cast<double>(b));
  } else {
    return a == b;
  }
}

// Index of the first mismatch between two arrays, or -1.
template <class T>
std::int64_t first_mismatch(const T* got, const T* want, std::int64_t n, double rtol = 1e-5, double atol = 1e-6) {
  for (std::int64_t i = 0; i < n; ++i)
    if (!values_close(got[i], want[i], rtol, atol)) return i;
  return -1;
}

// How a GEMM test stores a rows×cols operand: row-major, transposed (swapped strides, no
// copy) or row-major with 3 elements of padding after each row. Sets its (row, column)
// strides and returns the elements it spans (tests/cuda/test_gemm_kernel.cpp,
// test_gemm_tensor_core.cpp).
enum class MatrixStorage { RowMajor, Transposed, Padded };
inline std::int64_t matrix_strides(MatrixStorage storage, std::int64_t rows, std::int64_t cols, std::int64_t& rs,
                                   std::int64_t& cs) {
  switch (storage) {
    case MatrixStorage::RowMajor: rs = cols; cs = 1; return rows * cols;
    case MatrixStorage::Transposed: rs = 1; cs = rows; return rows * cols;
    case MatrixStorage::Padded: rs = cols + 3; cs = 1; return rows * (cols + 3);
  }
  return 0;
}

}  // namespace ember::testing

// Returns from the current test, marked skipped, when no CUDA GPU is visible.
#define EMBER_REQUIRE_GPU()                                                      \
  do {                                                                           \
    if (!::ember::cuda::is_available()) {                                        \
      ::ember::testing::mark_skipped("no CUDA GPU visible (ember::cuda::is_available() is false)"); \
      return;                                                                    \
    }                                                                            \
  } while (0)
