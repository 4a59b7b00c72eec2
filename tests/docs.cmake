# tests/docs.cmake — the docs do not rot: every path, function, class and member they name
# exists where they say (tests/docs/check_doc_paths.cmake), and the checker does catch a
# rotten doc (tests/docs/fixtures/rotten.md: one fabricated miss per rule) while passing a
# fresh one (tests/docs/fixtures/fresh.md).
add_test(NAME "docs: every path and function named in README.md and docs/*.md exists"
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${CMAKE_SOURCE_DIR} -P ${CMAKE_CURRENT_SOURCE_DIR}/docs/check_doc_paths.cmake)

add_test(NAME "docs: the path checker names the doc, line and missing thing"
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${CMAKE_SOURCE_DIR} -DDOCS=${CMAKE_CURRENT_SOURCE_DIR}/docs/fixtures/rotten.md
          -P ${CMAKE_CURRENT_SOURCE_DIR}/docs/check_doc_paths.cmake)
# Every rule's miss must be reported, one line each, in the doc's order, and the run must
# fail: a passing regex alone would ignore the exit status, so the failure count is matched
# too. One fabricated line per rule: a path, a namespace member, a link, a member of the
# wrong class, a function in the wrong layer, calls with arguments, a bare identifier, a
# class, an ember name in a ```cpp block, gdb break targets (qualified, FILE:FUNCTION, a
# missing file), an ember name in a gdb command, a `(gdb) break` in an output block, and a
# line of a code block that claims to be copied from a tutorial program but is not in it.
set_tests_properties("docs: the path checker names the doc, line and missing thing" PROPERTIES
  PASS_REGULAR_EXPRESSION "rotten\\.md:4: path 'autograd/tape_walker\\.cpp' does not exist[^\n]*\n[^\n]*rotten\\.md:5: 'ember::autograd::replay_tape': no declaration[^\n]*\n[^\n]*rotten\\.md:6: link target '\\.\\./\\.\\./\\.\\./docs/old-notes\\.md' does not exist[^\n]*\n[^\n]*rotten\\.md:7: 'ember::nn::Linear::apply': Linear has no member 'apply'[^\n]*\n[^\n]*rotten\\.md:8: 'ember::data::backward': no declaration of 'backward' in a file that opens namespace 'ember::data'[^\n]*\n[^\n]*rotten\\.md:9: 'ember::no_such_function': no declaration[^\n]*\n[^\n]*rotten\\.md:9: function 'no_such_method' is not in the sources[^\n]*\n[^\n]*rotten\\.md:10: name 'NoSuchGuard' is not in the sources[^\n]*\n[^\n]*rotten\\.md:11: 'TapeWalker::walk': no class, struct or enum 'TapeWalker'[^\n]*\n[^\n]*rotten\\.md:15: 'ember::nn::NoSuchLayer': no declaration[^\n]*\n[^\n]*rotten\\.md:19: gdb break target 'ember::Tensor::no_such_method': Tensor has no member[^\n]*\n[^\n]*rotten\\.md:19: gdb break target 'engine\\.cpp:no_such_loop': 'engine\\.cpp' has no function[^\n]*\n[^\n]*rotten\\.md:20: gdb break target 'gone_file\\.cpp:execute': no file 'gone_file\\.cpp'[^\n]*\n[^\n]*rotten\\.md:21: 'ember::autograd::no_such_dump': no declaration[^\n]*\n[^\n]*rotten\\.md:25: gdb break target 'ToyDataset::no_such_get': ToyDataset has no member[^\n]*\n[^\n]*rotten\\.md:35: line 'std::cout << tensor2d\\.no_such_line[^\n]*\n.*16 name\\(s\\) in the docs do not exist")
# ... and passes a doc that uses every rule's legitimate forms (aliases, template arguments,
# nested classes, operators, FILE:FUNCTION, a gdb condition, an allowed name, a copied block
# with "..." gaps), so that the rules stay strict without failing real docs.
add_test(NAME "docs: the path checker passes a doc whose names all exist"
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${CMAKE_SOURCE_DIR} -DDOCS=${CMAKE_CURRENT_SOURCE_DIR}/docs/fixtures/fresh.md
          -P ${CMAKE_CURRENT_SOURCE_DIR}/docs/check_doc_paths.cmake)

# The gdb pretty-printers of docs/debugging.md (scripts/gdb/ember_printers.py), run in gdb's
# batch mode on a small program built with debug information whatever the build type.
# Skipped (exit 4) where gdb is not installed. -femit-class-debug-always: GCC otherwise
# describes a class with a vtable (autograd::Node) only where its key function is compiled,
# which in a Release build of the library has no debug information at all (clang's
# -fstandalone-debug says the same).
add_executable(ember_gdb_printer_target ${CMAKE_CURRENT_SOURCE_DIR}/docs/gdb_printer_target.cpp)
target_link_libraries(ember_gdb_printer_target PRIVATE ember::ember)
target_compile_options(ember_gdb_printer_target PRIVATE ${EMBER_WARNINGS} -O0 -g -fno-eliminate-unused-debug-types
                       $<IF:$<CXX_COMPILER_ID:Clang>,-fstandalone-debug,-femit-class-debug-always>)
add_test(NAME "docs: the gdb pretty-printer prints tensors, views and the tape"
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/docs/check_gdb_printer.sh $<TARGET_FILE:ember_gdb_printer_target>
          ${CMAKE_SOURCE_DIR}/scripts/gdb/ember_printers.py ${CMAKE_CURRENT_SOURCE_DIR}/docs/expected_gdb_printer.txt)
set_tests_properties("docs: the gdb pretty-printer prints tensors, views and the tape" PROPERTIES
  SKIP_RETURN_CODE 4 TIMEOUT 60)
