// benchmarks/openblas_core_type.h — the OpenBLAS peer at its best on a CPU its dispatch does
// not know (docs/benchmarks.md, "OpenBLAS's core type"). Used by ember-bench and cpu_bench.
//
// Debian's OpenBLAS is built with DYNAMIC_ARCH: when the library loads it picks its kernels
// from the CPU's model number. A model newer than the release (OpenBLAS 0.3.21 and Intel's
// Emerald Rapids, family 6 model 207) is not in its table, and it falls back to its generic
// "Prescott" kernels (SSE3): 57-77 GFLOP/s on 1024 x 1024 on two cores where its AVX-512
// kernels, on the same machine in the same minute, run at 360. Measuring that fallback would
// make ember's ratios five times too kind. OpenBLAS's documented override is the environment
// variable OPENBLAS_CORETYPE, read only while the library loads, so a benchmark that finds
// Prescott on a CPU with AVX-512 (or AVX2 and FMA) sets it to the matching family and runs
// itself again, once. A value the user set is left alone (the condition below is then false,
// which also ends the re-run).
#pragma once

#include <strings.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace ember_bench {

// The core type to force, or "" to keep OpenBLAS's choice.
inline std::string openblas_core_type_to_force(const std::string& chosen_core, bool user_set_core_type,
                                               bool avx512f, bool avx2_fma) {
  if (user_set_core_type || ::strcasecmp(chosen_core.c_str(), "prescott") != 0) return "";
  if (avx512f) return "SkylakeX";
  if (avx2_fma) return "Haswell";
  return "";
}

// Call first thing in main, with openblas_get_corename(). Returns only when OpenBLAS's choice
// stands (or the re-run could not start, which is reported).
inline void rerun_with_openblas_core_type(char** argv, const char* chosen_core) {
#if defined(__x86_64__) && defined(__GNUC__)
  const bool avx512f = __builtin_cpu_supports("avx512f");
  const bool avx2_fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  const bool avx512f = false, avx2_fma = false;
#endif
  const std::string core = openblas_core_type_to_force(chosen_core != nullptr ? chosen_core : "",
                                                       std::getenv("OPENBLAS_CORETYPE") != nullptr, avx512f, avx2_fma);
  if (core.empty()) return;
  std::fprintf(stderr, "%s: OpenBLAS chose its generic %s kernels on this CPU; running again with OPENBLAS_CORETYPE=%s\n",
               argv[0], chosen_core, core.c_str());
  ::setenv("OPENBLAS_CORETYPE", core.c_str(), 1);
  ::execv("/proc/self/exe", argv);
  std::perror("exec /proc/self/exe (OpenBLAS measured with its generic kernels)");
}

}  // namespace ember_bench
