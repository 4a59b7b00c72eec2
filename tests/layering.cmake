# tests/layering.cmake — proves that a lower layer cannot include a higher one.
add_test(NAME "layering: core cannot include autograd"
  COMMAND ${CMAKE_COMMAND} -DCXX=${CMAKE_CXX_COMPILER} -DCORE_INCLUDE=${CMAKE_BINARY_DIR}/layer-include/core
          -DDIR=${CMAKE_CURRENT_SOURCE_DIR}/layering -P ${CMAKE_CURRENT_SOURCE_DIR}/layering/check_layering.cmake)
