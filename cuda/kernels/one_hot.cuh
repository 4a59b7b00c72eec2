// cuda/kernels/one_hot.cuh — one_hot(index, num_classes): out[i, c] = (index[i] == c), int64.
//
// One thread per *output* element (grid-stride): thread e computes i = e / classes,
// c = e % classes and writes 1 or 0. Every output element is written exactly once, so no
// zero-fill launch and no scatter are needed, and consecutive threads write consecutive
// int64s (coalesced); the index read is shared by the `classes` threads of a row (cached).
// The backend's one_hot (core/backend.h, OneHotPlan in core/fused_plans.h): native::one_hot
// (core/indexing.cpp) checks the index values on the host, then the output is built on
// the device — no host-built tensor and no host-to-device copy of rows × classes int64s.
// Bound: memory bandwidth — 8 × rows × classes bytes written (+ 8 × rows read).
#pragma once

#include <cstdint>

#include <ember/core/fused_plans.h>
#include <ember/cuda/kernels/device_support.cuh>

EMBER_KERNELS_BEGIN

using ::ember::OneHotPlan;

EMBER_GLOBAL void one_hot_kernel(OneHotPlan plan) {
  const std::int64_t total = plan.rows * plan.classes;
  for (std::int64_t e = global_thread_index(); e < total; e += grid_thread_count())
    plan.out[e] = plan.index[e / plan.classes] == e % plan.classes ? 1 : 0;
}

inline void dispatch_one_hot(const OneHotPlan& plan, cudaStream_t stream) {
  if (plan.rows == 0 || plan.classes == 0) return;
  EMBER_LAUNCH(one_hot_kernel, dim3(blocks_for(plan.rows * plan.classes, 256)), dim3(256), stream, plan);
}

EMBER_KERNELS_END
