# tests/find_nccl.cmake — NCCL is found in every layout it ships in, and a build without it
# says why (distributed/find_nccl.cmake, run on made-up layouts; no NCCL or GPU needed).
add_test(NAME "distributed: ember_find_nccl finds the toolkit's, a pip wheel's and NCCL_ROOT's NCCL, or says why not"
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${CMAKE_SOURCE_DIR} -DWORK=${CMAKE_CURRENT_BINARY_DIR}/find_nccl_layouts
          -P ${CMAKE_CURRENT_SOURCE_DIR}/distributed/check_find_nccl.cmake)
