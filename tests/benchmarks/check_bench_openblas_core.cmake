# tests/benchmarks/check_bench_openblas_core.cmake — the OpenBLAS peer runs its kernels for this
# CPU, never its generic fallback on a CPU with AVX2 (benchmarks/openblas_core_type.h): runs
# `ember-bench --quick --json` on one GEMM and reads the core OpenBLAS reports in the JSON's
# versions. Fails today's behaviour on a CPU that OpenBLAS 0.3.21 does not know (Intel Emerald
# Rapids: "Prescott", five times slower than its AVX-512 kernels). Skipped (exit 0 with a
# message) where OpenBLAS is not built or the CPU has no AVX2.
#   cmake -DBENCH=path/to/ember-bench -DOUT=report.json -P check_bench_openblas_core.cmake
cmake_minimum_required(VERSION 3.25)

file(READ /proc/cpuinfo cpuinfo LIMIT 16384)
if(NOT cpuinfo MATCHES "flags[^\n]* avx2 " OR NOT cpuinfo MATCHES "flags[^\n]* fma ")
  message(STATUS "no AVX2 + FMA on this CPU: OpenBLAS's generic kernels are its best here")
  return()
endif()
file(REMOVE "${OUT}")
execute_process(COMMAND "${BENCH}" --quick --json "${OUT}" --filter "^gemm/square/128$"
                RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "ember-bench exited with ${rc}\n${stdout}\n${stderr}")
endif()
file(READ "${OUT}" report)
string(JSON config ERROR_VARIABLE missing GET "${report}" versions openblas)
if(missing)
  message(STATUS "OpenBLAS not built into ember-bench: nothing to check")
  return()
endif()
if(config MATCHES "[Pp]rescott")
  message(FATAL_ERROR "OpenBLAS ran its generic Prescott kernels on a CPU with AVX2 + FMA: ${config}")
endif()
string(JSON rows LENGTH "${report}" results)
set(openblas_rows 0)
math(EXPR last "${rows} - 1")
foreach(i RANGE ${last})
  string(JSON impl GET "${report}" results ${i} implementation)
  if(impl STREQUAL "openblas")
    math(EXPR openblas_rows "${openblas_rows} + 1")
  endif()
endforeach()
if(openblas_rows EQUAL 0)
  message(FATAL_ERROR "no OpenBLAS row measured after the core type check:\n${stdout}")
endif()
message(STATUS "OpenBLAS core: ${config}")
