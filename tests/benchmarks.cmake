# tests/benchmarks.cmake — smoke tests of the ember-bench benchmark suite (issue 9).
# They check what ember-bench writes, never how fast anything is: timing lives in benchmarks/.
if(EMBER_BUILD_BENCHMARKS AND EXISTS ${CMAKE_SOURCE_DIR}/benchmarks/ember_bench/CMakeLists.txt)
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
  # Issue 19's figures, every one of --quick's: the convolutions (forward, forward + backward)
  # with their OpenBLAS ceilings, the CNN's pools and batch norm, the CNN's step and epoch;
  # with PyTorch, its rows in both memory formats.
  set(EMBER_BENCH_CNN_FILTER
      "^(conv2d/cnn_conv1/b32/fwd|conv2d/cnn_conv1/b32/fwd_bwd|conv2d/cnn_conv2/b32/fwd|conv2d/cnn_conv2/b32/fwd_bwd|conv2d/resnet_3x3/b8/fwd|conv2d/resnet_3x3/b8/fwd_bwd|conv2d/pointwise_1x1/b8/fwd|conv2d/pointwise_1x1/b8/fwd_bwd|max_pool2d/cnn_pool1/b32/fwd|max_pool2d/cnn_pool1/b32/fwd_bwd|max_pool2d/cnn_pool2/b32/fwd|max_pool2d/cnn_pool2/b32/fwd_bwd|batch_norm/32x64x14x14/fwd|batch_norm/32x64x14x14/fwd_bwd|train_step/cnn/b32|train_epoch/cnn/b32)$")
  add_test(NAME "benchmarks: ember-bench --quick measures the convolutional figures"
    COMMAND ${CMAKE_COMMAND}
      -DBENCH=$<TARGET_FILE:ember-bench>
      -DFILTER=${EMBER_BENCH_CNN_FILTER}
      -DOUT=${CMAKE_BINARY_DIR}/ember-bench-cnn.json
      -P ${CMAKE_CURRENT_SOURCE_DIR}/benchmarks/check_bench_json.cmake)
  set_tests_properties("benchmarks: ember-bench --quick measures the convolutional figures" PROPERTIES TIMEOUT 600)
  # The full catalogue (not run: minutes) names the batch-128 and larger figures too.
  add_test(NAME "benchmarks: ember-bench lists the full run's convolutional figures"
    COMMAND ${CMAKE_COMMAND} -DBENCH=$<TARGET_FILE:ember-bench>
      -P ${CMAKE_CURRENT_SOURCE_DIR}/benchmarks/check_bench_list.cmake)
  # The OpenBLAS peer at its best: its kernels for this CPU, not its generic fallback.
  add_test(NAME "benchmarks: ember-bench measures OpenBLAS with its kernels for this CPU"
    COMMAND ${CMAKE_COMMAND}
      -DBENCH=$<TARGET_FILE:ember-bench>
      -DOUT=${CMAKE_BINARY_DIR}/ember-bench-openblas-core.json
      -P ${CMAKE_CURRENT_SOURCE_DIR}/benchmarks/check_bench_openblas_core.cmake)
  set_tests_properties("benchmarks: ember-bench measures OpenBLAS with its kernels for this CPU" PROPERTIES TIMEOUT 120)
  # plot.py's roofline: each figure under the roof of its own precision (python3 only, no matplotlib).
  find_package(Python3 COMPONENTS Interpreter)
  if(Python3_Interpreter_FOUND)
    add_test(NAME "benchmarks: plot.py puts each figure under the roof of its own precision"
      COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/benchmarks/test_plot_roofline.py
              ${CMAKE_SOURCE_DIR}/benchmarks/plot.py)
  endif()
  add_test(NAME "benchmarks: ember-bench rejects a filter that matches nothing"
    COMMAND ember-bench --quick --filter "^no-such-figure$")
  set_tests_properties("benchmarks: ember-bench rejects a filter that matches nothing" PROPERTIES
    PASS_REGULAR_EXPRESSION "no figure matches --filter")
  # Issue 23: --compare on the synthetic reports of tests/benchmarks/compare_*.json (no timing:
  # the "runs" are hand-made), one test per property (check_bench_compare.cmake says which).
  foreach(case_and_name
      "slowdown|flags a clear slowdown first and leaves noise unflagged"
      "fail_on_regression|--fail-on-regression exits 1 only on a significant slowdown over PCT"
      "other_machine|warns when the runs come from different machines"
      "bad_inputs|exits 2 naming a missing, non-JSON or malformed report or a bad PCT")
    string(REPLACE "|" ";" case_and_name "${case_and_name}")
    list(GET case_and_name 0 compare_case)
    list(GET case_and_name 1 compare_name)
    add_test(NAME "benchmarks: ember-bench --compare ${compare_name}"
      COMMAND ${CMAKE_COMMAND} -DBENCH=$<TARGET_FILE:ember-bench> -DDATA=${CMAKE_CURRENT_SOURCE_DIR}/benchmarks
        -DWORK=${CMAKE_BINARY_DIR} -DCASE=${compare_case} -P ${CMAKE_CURRENT_SOURCE_DIR}/benchmarks/check_bench_compare.cmake)
  endforeach()
endif()
