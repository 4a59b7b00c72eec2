# tests/gpu_check.cmake — scripts/gpu-check.sh's logic without a GPU: stub tools play a
# device run whose build fails half way and one stopped by SIGTERM (tests/scripts/test_gpu_check.sh).
add_test(NAME "scripts: gpu-check runs what built, the sanitizers, and prints its summary after failures"
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/scripts/test_gpu_check.sh ${CMAKE_SOURCE_DIR}
          ${CMAKE_CURRENT_BINARY_DIR}/gpu_check_test)
set_tests_properties("scripts: gpu-check runs what built, the sanitizers, and prints its summary after failures"
  PROPERTIES TIMEOUT 60)
