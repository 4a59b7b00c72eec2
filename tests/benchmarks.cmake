# tests/benchmarks.cmake — smoke tests of the ember-bench benchmark suite (issue 9).
# They check what ember-bench writes, never how fast anything is: timing lives in benchmarks/.
if(EXISTS ${CMAKE_SOURCE_DIR}/benchmarks/ember_bench/CMakeLists.txt)
  # A few fast figures that cover every record kind: ember + OpenBLAS (GEMM), ember + memcpy
  # (copy ceiling), an elementwise op, a training step and a DataLoader pass with a worker.
  set(EMBER_BENCH_SMOKE_FILTER
      "^(gemm/square/128|elementwise/add/1K|copy/clone/1M|train_step/toy/b32|dataloader/workers1)$")
  add_test(NAME "benchmarks: ember-bench --quick writes a well-formed JSON report"
    COMMAND ${CMAKE_COMMAND}
      -DBENCH=$<TARGET_FILE:ember-bench>
      -DFILTER=${EMBER_BENCH_SMOKE_FILTER}
      -DOUT=${CMAKE_BINARY_DIR}/ember-bench-smoke.json
      -P ${CMAKE_CURRENT_SOURCE_DIR}/benchmarks/check_bench_json.cmake)
  set_tests_properties("benchmarks: ember-bench --quick writes a well-formed JSON report" PROPERTIES TIMEOUT 120)
  add_test(NAME "benchmarks: ember-bench rejects a filter that matches nothing"
    COMMAND ember-bench --quick --filter "^no-such-figure$")
  set_tests_properties("benchmarks: ember-bench rejects a filter that matches nothing" PROPERTIES
    PASS_REGULAR_EXPRESSION "no figure matches --filter")
endif()
