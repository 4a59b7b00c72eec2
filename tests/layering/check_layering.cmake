# Run with cmake -P. Compiles two files with only ember_core's include directory:
# core_only.cpp must compile; core_includes_autograd.cpp must fail *because the autograd
# header is not reachable* (not for some other reason).
execute_process(COMMAND ${CXX} -std=c++20 -fsyntax-only -I${CORE_INCLUDE} ${DIR}/core_only.cpp
                RESULT_VARIABLE ok_result ERROR_VARIABLE ok_error)
if(ok_result)
  message(FATAL_ERROR "control case failed to compile:\n${ok_error}")
endif()
execute_process(COMMAND ${CXX} -std=c++20 -fsyntax-only -I${CORE_INCLUDE} ${DIR}/core_includes_autograd.cpp
                RESULT_VARIABLE bad_result ERROR_VARIABLE bad_error)
if(NOT bad_result)
  message(FATAL_ERROR "core code could include an autograd header: layering is not enforced")
endif()
if(NOT bad_error MATCHES "ember/autograd/autograd.h")
  message(FATAL_ERROR "wrong-way include failed for another reason:\n${bad_error}")
endif()
message(STATUS "wrong-way include rejected as expected")
