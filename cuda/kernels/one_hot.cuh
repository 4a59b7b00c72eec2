// cuda/kernels/one_hot.cuh — one_hot(index, num_classes): out[i, c] = (index[i] == c), int64.
//
// One thread per *output* element (grid-stride): thread e computes i = e / classes,
// c = e % classes and writes 1 or 0. Every output element is written exactly once, so no
// zero-fill launch and no scatter are needed, and consecutive threads write consecutive
// int64s (coalesced); the index read is shared by the `classes` threads of a row (cached).
// Index values are checked on the host (native::one_hot) before the launch.
// Bound: memory bandwidth — 8 × rows × classes bytes written (+ 8 × rows read).
// Status: exercised by the emulator tests (tests/cuda/test_fused_kernels.cpp); not yet a
// Backend method, so GPU one_hot still runs the composite native path (docs/cuda.md).
#pragma once

#include <cstdint>

#include <ember/cuda/kernels/device_support.cuh>

EMBER_KERNELS_BEGIN

EMBER_GLOBAL void one_hot_kernel(const std::int64_t* index, std::int64_t* out, std::int64_t rows,
                                 std::int64_t classes) {
  const std::int64_t total = rows * classes;
  for (std::int64_t e = global_thread_index(); e < total; e += grid_thread_count())
    out[e] = index[e / classes] == e % classes ? 1 : 0;
}

inline void dispatch_one_hot(const std::int64_t* index, std::int64_t* out, std::int64_t rows, std::int64_t classes,
                             cudaStream_t stream) {
  if (rows == 0 || classes == 0) return;
  EMBER_LAUNCH(one_hot_kernel, dim3(blocks_for(rows * classes, 256)), dim3(256), stream, index, out, rows, classes);
}

EMBER_KERNELS_END
