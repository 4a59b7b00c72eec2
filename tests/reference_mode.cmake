# tests/reference_mode.cmake — tests run a second time with EMBER_KERNELS=reference
# (core/kernel_mode.h): every CPU op then goes through the plain loops of core/reference/ and
# the training step is unfused (Linear then ReLU, log_softmax then nll_loss, SGD as tensor
# ops). (The fast-kernel runs of the same tests are the ordinary per-layer tests.)
#   - the tutorial programs must still print the tutorial's numbers digit for digit, and
#     `ember train` must still match PyTorch loss for loss (the programs inherit the variable
#     from the test binary);
#   - the core, autograd and nn suites, whole (each binary in one CTest test: a few seconds),
#     hold in reference mode as well: every op, error message and PyTorch value.
if(TARGET ember_apps_tests)
  foreach(tag tutorial parity)
    set(name "reference kernels: apps [${tag}] with EMBER_KERNELS=reference")
    add_test(NAME "${name}" COMMAND ember_apps_tests "[${tag}]")
    set_tests_properties("${name}" PROPERTIES
      ENVIRONMENT "EMBER_KERNELS=reference;EMBER_BIN_DIR=${CMAKE_BINARY_DIR}/bin"
      SKIP_RETURN_CODE 4 TIMEOUT 900)
  endforeach()
endif()
foreach(layer core autograd nn)
  if(TARGET ember_${layer}_tests)
    set(name "reference kernels: the ${layer} tests with EMBER_KERNELS=reference")
    add_test(NAME "${name}" COMMAND ember_${layer}_tests)
    set_tests_properties("${name}" PROPERTIES
      ENVIRONMENT "EMBER_KERNELS=reference;EMBER_BIN_DIR=${CMAKE_BINARY_DIR}/bin" TIMEOUT 600)
  endif()
endforeach()
