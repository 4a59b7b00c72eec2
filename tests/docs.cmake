# tests/docs.cmake — the docs do not rot: every path and function they name exists
# (tests/docs/check_doc_paths.cmake), and the checker does catch a rotten doc
# (tests/docs/fixtures/rotten.md names one missing file, function and link target).
add_test(NAME "docs: every path and function named in README.md and docs/*.md exists"
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${CMAKE_SOURCE_DIR} -P ${CMAKE_CURRENT_SOURCE_DIR}/docs/check_doc_paths.cmake)

add_test(NAME "docs: the path checker names the doc, line and missing thing"
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${CMAKE_SOURCE_DIR} -DDOCS=${CMAKE_CURRENT_SOURCE_DIR}/docs/fixtures/rotten.md
          -P ${CMAKE_CURRENT_SOURCE_DIR}/docs/check_doc_paths.cmake)
# All three lines must be reported, and the run must fail: a passing regex alone would
# ignore the exit status, so the failure count is matched too.
set_tests_properties("docs: the path checker names the doc, line and missing thing" PROPERTIES
  PASS_REGULAR_EXPRESSION "rotten.md:4: path 'autograd/tape_walker.cpp' does not exist\n[^\n]*rotten.md:5: function 'replay_tape'[^\n]*\n[^\n]*rotten.md:6: link target '../../../docs/old-notes.md' does not exist\n.*3 name\\(s\\) in the docs do not exist")

# The gdb pretty-printers of docs/debugging.md (scripts/gdb/ember_printers.py), run in gdb's
# batch mode on a small program built with debug information whatever the build type.
# Skipped (exit 4) where gdb is not installed. -femit-class-debug-always: GCC otherwise
# describes a class with a vtable (autograd::Node) only where its key function is compiled,
# which in a Release build of the library has no debug information at all.
add_executable(ember_gdb_printer_target ${CMAKE_CURRENT_SOURCE_DIR}/docs/gdb_printer_target.cpp)
target_link_libraries(ember_gdb_printer_target PRIVATE ember::ember)
target_compile_options(ember_gdb_printer_target PRIVATE ${EMBER_WARNINGS} -O0 -g -fno-eliminate-unused-debug-types -femit-class-debug-always)
add_test(NAME "docs: the gdb pretty-printer prints tensors, views and the tape"
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/docs/check_gdb_printer.sh $<TARGET_FILE:ember_gdb_printer_target>
          ${CMAKE_SOURCE_DIR}/scripts/gdb/ember_printers.py ${CMAKE_CURRENT_SOURCE_DIR}/docs/expected_gdb_printer.txt)
set_tests_properties("docs: the gdb pretty-printer prints tensors, views and the tape" PROPERTIES
  SKIP_RETURN_CODE 4 TIMEOUT 60)
