// core/cpu/flash_attention_rows.h — the per-row vector loops of the fused attention kernel
// (core/cpu/flash_attention_kernels.cpp): exp, max, sums and the softmax gradient over one row
// of a score tile. Performance code; the reference loop is core/reference/flash_attention_loops.cpp.
//
// Between its two GEMMs a tile of scores needs one exp per element (forward and backward).
// libm's exp is one call per element, as long as the GEMM's 2·(E + Ev) flops per score, so
// the exp here is a polynomial the compiler vectorises: n = round(x·log2 e), r = x - n·ln 2
// (|r| <= ln2 / 2, ln 2 split in two so n·ln2_hi is exact), exp(r) by a polynomial, times 2^n
// built in the exponent bits. float: Cephes' expf polynomial (degree 6, within 2 ulp of
// libm); double: the Taylor series to r^13 (truncation below 1e-17 relative). Arguments
// below the smallest normal's log give 0, NaN stays NaN. Sums and maxima run in kLanes
// interleaved partial results (one or two vector registers) so that they vectorise without
// -ffast-math's reassociation.
//
// The same source is compiled three times — portable (SSE2, the baseline build), AVX2 + FMA
// and AVX-512 (core/CMakeLists.txt gives core/cpu/flash_attention_rows_avx2.cpp and
// _avx512.cpp their flags) — each in its own namespace, EMBER_FLASH_ROWS_NAMESPACE, so no
// inline function is defined twice with different code. flash_attention_kernels.cpp picks
// one table at run time: the instruction set of the GEMM's micro-kernel (cpuid, or
// EMBER_GEMM_KERNEL; core/cpu/gemm_kernels.h).
//
// Include only after defining EMBER_FLASH_ROWS_NAMESPACE; flash_attention_row_ops.h declares
// what the including files export.
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include <ember/core/cpu/flash_attention_row_ops.h>

#ifndef EMBER_FLASH_ROWS_NAMESPACE
#error "define EMBER_FLASH_ROWS_NAMESPACE before including flash_attention_rows.h"
#endif

namespace ember::cpu::EMBER_FLASH_ROWS_NAMESPACE {
namespace {

constexpr int kLanes = 16;  // one AVX-512 register of float, two of double

template <class T>
struct ExpConstants;
template <>
struct ExpConstants<float> {
  using Bits = std::int32_t;
  static constexpr float kLog2e = 1.44269504088896341f;
  static constexpr float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
  static constexpr float kMax = 88.3762626647949f;   // above: inf (keeps 2^n finite; exp(88.72) overflows anyway)
  static constexpr float kMin = -87.33654475055310f;  // below: smaller than the smallest normal
  static constexpr float kRound = 12582912.0f;        // 1.5 · 2^23: adding it rounds to an integer
  static constexpr int kMantissa = 23, kBias = 127;
  static float poly(float r) {
    float y = 1.9875691500e-4f;
    y = y * r + 1.3981999507e-3f;
    y = y * r + 8.3334519073e-3f;
    y = y * r + 4.1665795894e-2f;
    y = y * r + 1.6666665459e-1f;
    y = y * r + 5.0000001201e-1f;
    return y * r * r + r + 1.0f;
  }
};
template <>
struct ExpConstants<double> {
  using Bits = std::int64_t;
  static constexpr double kLog2e = 1.4426950408889634074;
  static constexpr double kLn2Hi = 6.93145751953125e-1, kLn2Lo = 1.42860682030941723212e-6;
  static constexpr double kMax = 709.0895657128241;  // 1023 · ln 2: above, inf
  static constexpr double kMin = -708.3964185322641;
  static constexpr double kRound = 6755399441055744.0;  // 1.5 · 2^52
  static constexpr int kMantissa = 52, kBias = 1023;
  static double poly(double r) {
    // Σ r^k / k!, k = 0..13, by Horner.
    double y = 1.0 / 6227020800.0;
    y = y * r + 1.0 / 479001600.0;
    y = y * r + 1.0 / 39916800.0;
    y = y * r + 1.0 / 3628800.0;
    y = y * r + 1.0 / 362880.0;
    y = y * r + 1.0 / 40320.0;
    y = y * r + 1.0 / 5040.0;
    y = y * r + 1.0 / 720.0;
    y = y * r + 1.0 / 120.0;
    y = y * r + 1.0 / 24.0;
    y = y * r + 1.0 / 6.0;
    y = y * r + 0.5;
    y = y * r + 1.0;
    return y * r + 1.0;
  }
};

// exp(x), branch-free (selects only), so a loop of it vectorises.
template <class T>
inline T vector_exp(T x) {
  using C = ExpConstants<T>;
  using Bits = typename C::Bits;
  T clamped = x > C::kMax ? C::kMax : x;  // NaN compares false: stays NaN
  clamped = clamped < C::kMin ? C::kMin : clamped;
  // t's low mantissa bits hold round(x · log2 e) as an integer (|n| < 2^22), and t - kRound
  // the same n as a floating number.
  const T t = clamped * C::kLog2e + C::kRound;
  const T n = t - C::kRound;
  const T r = (clamped - n * C::kLn2Hi) - n * C::kLn2Lo;
  const Bits n_bits = std::bit_cast<Bits>(t) - std::bit_cast<Bits>(C::kRound);
  const T two_to_n = std::bit_cast<T>(static_cast<Bits>((n_bits + C::kBias) << C::kMantissa));
  const T y = C::poly(r) * two_to_n;
  return x < C::kMin ? T(0) : (x > C::kMax ? std::numeric_limits<T>::infinity() : y);
}

template <class T>
T row_max(const T* x, std::int64_t n) {
  T lane[kLanes];
  for (int l = 0; l < kLanes; ++l) lane[l] = -std::numeric_limits<T>::infinity();
  std::int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int l = 0; l < kLanes; ++l) lane[l] = x[j + l] > lane[l] ? x[j + l] : lane[l];
  for (; j < n; ++j) lane[0] = x[j] > lane[0] ? x[j] : lane[0];
  T m = lane[0];
  for (int l = 1; l < kLanes; ++l) m = lane[l] > m ? lane[l] : m;
  return m;
}

// x_j = exp(x_j - shift) for j < n, in place; returns Σ_j x_j.
template <class T>
T exp_shifted_sum(T* x, std::int64_t n, T shift) {
  T lane[kLanes] = {};
  std::int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      const T e = vector_exp(x[j + l] - shift);
      x[j + l] = e;
      lane[l] += e;
    }
  for (; j < n; ++j) {
    x[j] = vector_exp(x[j] - shift);
    lane[0] += x[j];
  }
  for (int width = kLanes / 2; width > 0; width /= 2)
    for (int l = 0; l < width; ++l) lane[l] += lane[l + width];
  return lane[0];
}

// x_j = exp(x_j - shift), in place.
template <class T>
void exp_shifted(T* x, std::int64_t n, T shift) {
  for (std::int64_t j = 0; j < n; ++j) x[j] = vector_exp(x[j] - shift);
}

// dp_j = p_j · (dp_j - delta): the softmax's gradient w.r.t. the scores, in place.
template <class T>
void softmax_grad(T* dp, const T* p, std::int64_t n, T delta) {
  for (std::int64_t j = 0; j < n; ++j) dp[j] = p[j] * (dp[j] - delta);
}

template <class T>
void scale(T* x, std::int64_t n, T factor) {
  for (std::int64_t j = 0; j < n; ++j) x[j] *= factor;
}

template <class T>
T dot(const T* a, const T* b, std::int64_t n) {
  T lane[kLanes] = {};
  std::int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int l = 0; l < kLanes; ++l) lane[l] += a[j + l] * b[j + l];
  for (; j < n; ++j) lane[0] += a[j] * b[j];
  for (int width = kLanes / 2; width > 0; width /= 2)
    for (int l = 0; l < width; ++l) lane[l] += lane[l + width];
  return lane[0];
}

template <class T>
FlashRowOps<T> row_ops() {
  FlashRowOps<T> ops;
  ops.max = &row_max<T>;
  ops.exp_shifted_sum = &exp_shifted_sum<T>;
  ops.exp_shifted = &exp_shifted<T>;
  ops.softmax_grad = &softmax_grad<T>;
  ops.scale = &scale<T>;
  ops.dot = &dot<T>;
  ops.exp = &vector_exp<T>;
  return ops;
}

}  // namespace
}  // namespace ember::cpu::EMBER_FLASH_ROWS_NAMESPACE
