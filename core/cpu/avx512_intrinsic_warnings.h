// core/cpu/avx512_intrinsic_warnings.h — performance code's housekeeping: GCC 12 reports its own
// _mm512_undefined_*() inside the AVX-512 masked-load, shuffle and widening intrinsics as "used
// uninitialized" (a false positive: every lane is written before it is read). The AVX-512 files
// silence those two warnings around their intrinsics, and only there:
//
//   EMBER_AVX512_INTRINSICS_BEGIN
//   ... code calling the intrinsics ...
//   EMBER_AVX512_INTRINSICS_END
#pragma once

#ifdef __clang__  // -Wmaybe-uninitialized is GCC's alone
#define EMBER_AVX512_INTRINSICS_BEGIN \
  _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wuninitialized\"")
#else
#define EMBER_AVX512_INTRINSICS_BEGIN                                                     \
  _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wuninitialized\"") \
      _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"")
#endif
#define EMBER_AVX512_INTRINSICS_END _Pragma("GCC diagnostic pop")
