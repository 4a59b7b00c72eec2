// tests/support/row_major_gemm_plan.h — the GemmPlan of one row-major product, for tests that
// call a GEMM kernel directly.
//
// C (m x n) = A (m x k) · B (k x n), every matrix row-major and dense: the strides a test would
// otherwise spell out field by field (core/strided_index.h, GemmPlan). alpha 1, beta 0, no
// bias; a test changes what it needs afterwards.
#pragma once

#include <cstdint>

#include <ember/core/dtype.h>
#include <ember/core/strided_index.h>

namespace ember::testing {

inline GemmPlan row_major_gemm_plan(std::int64_t m, std::int64_t n, std::int64_t k, const void* a, const void* b,
                                    void* c, DType dtype) {
  return GemmPlan{.m = m, .n = n, .k = k,
                  .a = a, .row_stride_a = k, .col_stride_a = 1,
                  .b = b, .row_stride_b = n, .col_stride_b = 1,
                  .c = c, .row_stride_c = n, .col_stride_c = 1,
                  .dtype = dtype};
}

}  // namespace ember::testing
