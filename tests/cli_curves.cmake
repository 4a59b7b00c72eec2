# tests/cli_curves.cmake — the `ember plot` and --tensorboard tests (tests/apps/test_plot*.cpp,
# test_tensorboard.cpp) call the library behind them directly, not only the binary.
if(TARGET ember_apps_tests AND TARGET ember_cli_curves)
  target_link_libraries(ember_apps_tests PRIVATE ember_cli_curves)
endif()
