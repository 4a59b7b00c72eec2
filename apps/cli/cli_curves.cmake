# apps/cli/cli_curves.cmake — the library behind `ember plot` (curves drawn with cairo) and
# `ember train --tensorboard` (event files: libprotobuf messages, Boost.CRC checksums).
#
# Each library is optional: without it the build still succeeds, and the feature that needs
# it says at run time what to install ("ember was built without cairo: install
# libcairo2-dev and rebuild"). scripts/install-deps.sh installs all three.
#   EMBER_HAVE_CAIRO        plot_render.cpp draws SVG and PNG files
#   EMBER_HAVE_TENSORBOARD  tensorboard_*.cpp (libprotobuf + protoc, and Boost's headers)
set(ember_cli_curves_sources
  ${CMAKE_CURRENT_SOURCE_DIR}/plot_data.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/plot_axes.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/plot_layout.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/plot_render.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/tensorboard_record.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/tensorboard_writer.cpp)
add_library(ember_cli_curves STATIC ${ember_cli_curves_sources})
# The plot and TensorBoard headers are included by the CLI and by tests/apps.
target_include_directories(ember_cli_curves PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
# ember's error classes are header-only: their include path is enough (linking ember::ember
# here would put the whole-archive core library on the link line twice).
target_include_directories(ember_cli_curves PRIVATE $<TARGET_PROPERTY:ember_core,INTERFACE_INCLUDE_DIRECTORIES>)
target_link_libraries(ember_cli_curves PUBLIC nlohmann_json::nlohmann_json)
target_compile_options(ember_cli_curves PRIVATE ${EMBER_WARNINGS})

find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(CAIRO QUIET IMPORTED_TARGET cairo)
endif()
if(CAIRO_FOUND)
  target_link_libraries(ember_cli_curves PRIVATE PkgConfig::CAIRO)
  target_compile_definitions(ember_cli_curves PRIVATE EMBER_HAVE_CAIRO=1)
  message(STATUS "ember: ember plot: cairo ${CAIRO_VERSION}")
else()
  message(STATUS "ember: ember plot: cairo not found (install libcairo2-dev); plotting disabled")
endif()

find_package(Protobuf QUIET)
find_package(Boost 1.66 QUIET)  # headers only: Boost.CRC
if(Protobuf_FOUND AND Protobuf_PROTOC_EXECUTABLE AND Boost_FOUND)
  # The generated code is compiled without ember's warning flags (it is not ours to fix).
  add_library(ember_cli_tensorboard_proto OBJECT ${CMAKE_CURRENT_SOURCE_DIR}/tensorboard_event.proto)
  protobuf_generate(TARGET ember_cli_tensorboard_proto LANGUAGE cpp
                    IMPORT_DIRS ${CMAKE_CURRENT_SOURCE_DIR} PROTOC_OUT_DIR ${CMAKE_CURRENT_BINARY_DIR})
  target_link_libraries(ember_cli_tensorboard_proto PUBLIC protobuf::libprotobuf)
  target_include_directories(ember_cli_tensorboard_proto PUBLIC ${CMAKE_CURRENT_BINARY_DIR})
  target_link_libraries(ember_cli_curves PRIVATE ember_cli_tensorboard_proto Boost::headers)
  target_compile_definitions(ember_cli_curves PRIVATE EMBER_HAVE_TENSORBOARD=1)
  message(STATUS "ember: --tensorboard: libprotobuf ${Protobuf_VERSION}, Boost ${Boost_VERSION}")
else()
  message(STATUS "ember: --tensorboard: libprotobuf, protoc or Boost not found "
                 "(install libprotobuf-dev protobuf-compiler libboost-dev); TensorBoard output disabled")
endif()
