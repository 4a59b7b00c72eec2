# tests/reference_mode.cmake — the tutorial programs and the CLI's PyTorch parity tests run a
# second time with EMBER_KERNELS=reference (core/kernel_mode.h): every CPU op then goes
# through the plain loops of core/reference/ and the training step is unfused, and the
# programs must still print the tutorial's numbers digit for digit and `ember train` must
# still match PyTorch loss for loss. The programs inherit the variable from the test binary.
# (The fast-kernel runs of the same tests are the ordinary "apps: ..." tests.)
if(TARGET ember_apps_tests)
  foreach(tag tutorial parity)
    set(name "reference kernels: apps [${tag}] with EMBER_KERNELS=reference")
    add_test(NAME "${name}" COMMAND ember_apps_tests "[${tag}]")
    set_tests_properties("${name}" PROPERTIES
      ENVIRONMENT "EMBER_KERNELS=reference;EMBER_BIN_DIR=${CMAKE_BINARY_DIR}/bin"
      SKIP_RETURN_CODE 4 TIMEOUT 900)
  endforeach()
endif()
