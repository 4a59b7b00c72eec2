# tests/install.cmake — installs ember into a scratch prefix and builds tests/downstream
# against it with find_package(ember); the test passes when the program prints §2's result.
set(EMBER_INSTALL_TEST_DIR ${CMAKE_BINARY_DIR}/install-test)
add_test(NAME "install: downstream find_package(ember)"
  COMMAND ${CMAKE_COMMAND}
    -DBUILD_DIR=${CMAKE_BINARY_DIR}
    -DSOURCE_DIR=${CMAKE_CURRENT_SOURCE_DIR}/downstream
    -DWORK_DIR=${EMBER_INSTALL_TEST_DIR}
    -DGENERATOR=${CMAKE_GENERATOR}
    -P ${CMAKE_CURRENT_SOURCE_DIR}/downstream/run_install_test.cmake)
set_tests_properties("install: downstream find_package(ember)" PROPERTIES TIMEOUT 600 RUN_SERIAL TRUE)
