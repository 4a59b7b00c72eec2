# Run with cmake -P: install BUILD_DIR into WORK_DIR/prefix, configure + build the
# downstream project against it, run it, and check its output.
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix
                RESULT_VARIABLE result OUTPUT_QUIET)
if(result)
  message(FATAL_ERROR "cmake --install failed: ${result}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/build -G ${GENERATOR}
                        -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_BUILD_TYPE=Release
                RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(result)
  message(FATAL_ERROR "configuring the downstream project failed:\n${out}\n${err}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build
                RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(result)
  message(FATAL_ERROR "building the downstream project failed:\n${out}\n${err}")
endif()
execute_process(COMMAND ${WORK_DIR}/build/downstream RESULT_VARIABLE result OUTPUT_VARIABLE out)
set(expected "tensor([[14, 32],\n        [32, 77]])\n")
if(result OR NOT out STREQUAL expected)
  message(FATAL_ERROR "downstream program printed:\n${out}\nexpected:\n${expected}")
endif()
message(STATUS "downstream project built against the installed ember and printed the expected result")
