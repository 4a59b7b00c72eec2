// core/cpu/half_conversions_f16c.cpp — performance code, safe to skip on a first read:
// float32 <-> float16 for contiguous runs with the F16C instructions, eight values at a time.
//
// Tutorial §12 (mixed precision). The element function (element::Cast, core/reduced_float.h's
// integer conversions) handles one value with a dozen branches on its exponent, which no
// compiler vectorises: a float16 cast ran at about a tenth of a bfloat16 one, and every
// float16 product widens its operands and narrows its result (core/linalg.cpp). vcvtph2ps and
// vcvtps2ph convert eight values per instruction, and give the element function's bits: both
// round to nearest even (the immediate says so, whatever MXCSR says), keep subnormals and
// turn overflow into inf. Only NaN differs: vcvtps2ph keeps part of a NaN's payload, and
// ember (as c10's scalar conversion) writes the quiet NaN 0x7E00 with the sign, so NaN lanes
// are replaced. Widening needs no repair: a float16 NaN becomes the float NaN with its payload
// and the quiet bit set, as the element function builds it. tests/core/test_reduced_float.cpp
// compares the two on all 65 536 float16 patterns and on float32 edge cases and random bits.
//
// This file alone is compiled with -mavx2 -mf16c (core/CMakeLists.txt) and runs only after
// cpuid said F16C is there; the tails and other CPUs use the element function.
#include <cpuid.h>
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include <ember/core/cpu/elementwise_wide_runs.h>

namespace ember::cpu::wide {

namespace {

// F16C is cpuid leaf 1's ECX bit 29 (asked directly: clang's __builtin_cpu_supports has no
// "f16c"); AVX2's check also says the OS saves the ymm registers.
bool cpu_has_f16c() {
  static const bool has = [] {
    __builtin_cpu_init();
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __builtin_cpu_supports("avx2") && __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
  }();
  return has;
}

}  // namespace

void run(element::Cast<Half, float> cast, Half* out, const float* x, std::int64_t count) {
  std::int64_t i = 0;
  if (cpu_has_f16c()) {
    const __m256i quiet_nan = _mm256_set1_epi32(0x7E00), sign_mask = _mm256_set1_epi32(0x8000);
    for (; i + 8 <= count; i += 8) {
      const __m256 value = _mm256_loadu_ps(x + i);
      __m128i half = _mm256_cvtps_ph(value, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      const __m256 nan = _mm256_cmp_ps(value, value, _CMP_UNORD_Q);
      if (_mm256_movemask_ps(nan) != 0) {  // rare: rebuild the NaN lanes as sign | 0x7E00
        const __m256i sign = _mm256_and_si256(_mm256_srli_epi32(_mm256_castps_si256(value), 16), sign_mask);
        const __m256i widened = _mm256_blendv_epi8(_mm256_cvtepu16_epi32(half), _mm256_or_si256(sign, quiet_nan),
                                                   _mm256_castps_si256(nan));
        half = _mm_packus_epi32(_mm256_castsi256_si128(widened), _mm256_extracti128_si256(widened, 1));
      }
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), half);
    }
  }
  for (; i < count; ++i) out[i] = cast(x[i]);
}

void run(element::Cast<float, Half> cast, float* out, const Half* x, std::int64_t count) {
  std::int64_t i = 0;
  if (cpu_has_f16c()) {
    for (; i + 8 <= count; i += 8)
      _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i))));
  }
  for (; i < count; ++i) out[i] = cast(x[i]);
}

}  // namespace ember::cpu::wide
