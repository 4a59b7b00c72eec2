// core/cpu/wide_clones.h — performance code, safe to skip on a first read: the attribute that
// compiles a CPU loop three times (AVX-512, AVX2 with FMA, plain x86-64), the dynamic loader
// picking the widest the CPU has, once (GCC's target_clones). The library itself is built for
// plain x86-64 so it runs anywhere; a loop marked with this gets the wide vectors, and FMA
// instructions for the fused multiply-adds it writes, where the CPU has them. ("arch=haswell"
// is AVX2 with FMA: an "avx2" clone has no FMA, so an fma would stay a call into the C
// library.) A cloned loop writes its math with wide::fma and friends below.
// clang (the fuzz build) gets the plain loops.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define EMBER_WIDE_CLONES [[gnu::target_clones("avx512f", "arch=haswell", "default")]]
#else
#define EMBER_WIDE_CLONES
#endif

namespace ember::cpu::wide {

// The math a cloned loop calls. Not std::fma, std::sqrt, std::abs or std::isnan: those are
// small functions compiled for plain x86-64, and GCC does not inline them into the
// "arch=haswell" clone (another arch), so that clone made a function call per element
// (std::fma, then the C library's fmaf) instead of one instruction. A builtin is expanded
// by the clone's own code generator: one FMA, one vsqrt, a mask.
template <class T>
[[gnu::always_inline]] inline T fma(T a, T b, T c) {
  if constexpr (sizeof(T) == sizeof(float)) return __builtin_fmaf(a, b, c);
  else return __builtin_fma(a, b, c);
}
template <class T>
[[gnu::always_inline]] inline T sqrt(T x) {
  if constexpr (sizeof(T) == sizeof(float)) return __builtin_sqrtf(x);
  else return __builtin_sqrt(x);
}
template <class T>
[[gnu::always_inline]] inline T abs(T x) {
  if constexpr (sizeof(T) == sizeof(float)) return __builtin_fabsf(x);
  else return __builtin_fabs(x);
}
template <class T>
[[gnu::always_inline]] inline bool isnan(T x) {
  return __builtin_isnan(x);
}

}  // namespace ember::cpu::wide
