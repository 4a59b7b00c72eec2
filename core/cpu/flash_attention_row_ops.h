// core/cpu/flash_attention_row_ops.h — the table of per-row vector loops the fused attention
// kernel uses (core/cpu/flash_attention_rows.h has the loops and says why they exist), one
// table per instruction set: the portable one (flash_attention_kernels.cpp), AVX2 + FMA
// (flash_attention_rows_avx2.cpp) and AVX-512 (flash_attention_rows_avx512.cpp).
#pragma once

#include <cstdint>

namespace ember::cpu {

template <class T>
struct FlashRowOps {
  T (*max)(const T* x, std::int64_t n) = nullptr;                         // max_j x_j (-inf when n == 0)
  T (*exp_shifted_sum)(T* x, std::int64_t n, T shift) = nullptr;         // x_j = exp(x_j - shift); Σ x_j
  void (*exp_shifted)(T* x, std::int64_t n, T shift) = nullptr;          // x_j = exp(x_j - shift)
  void (*softmax_grad)(T* dp, const T* p, std::int64_t n, T delta) = nullptr;  // dp_j = p_j (dp_j - delta)
  void (*scale)(T* x, std::int64_t n, T factor) = nullptr;               // x_j *= factor
  T (*dot)(const T* a, const T* b, std::int64_t n) = nullptr;            // Σ a_j b_j
  T (*exp)(T x) = nullptr;                                               // one exp, the same polynomial
};

// Call only when the CPU has the instruction set (cpuid).
FlashRowOps<float> flash_row_ops_avx512_f32();
FlashRowOps<double> flash_row_ops_avx512_f64();
FlashRowOps<float> flash_row_ops_avx2_f32();
FlashRowOps<double> flash_row_ops_avx2_f64();

}  // namespace ember::cpu
