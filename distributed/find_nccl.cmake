# distributed/find_nccl.cmake — where NCCL is, or why the NCCL backend is not built.
#
# NCCL ships no CMake config, and comes in three layouts:
#   * inside the CUDA toolkit or a system package: include/nccl.h, lib/libnccl.so;
#   * a pip wheel (nvidia-nccl-cu12 / -cu13, what PyTorch installs):
#     site-packages/nvidia/nccl/{include/nccl.h, lib/libnccl.so.2} — no libnccl.so link;
#   * a tarball anywhere, named by NCCL_ROOT (CMake or environment variable).
# Searching only the toolkit for "libnccl.so" once built a GPU machine's ember silently
# without NCCL. So every layout is searched, the versioned name too, and the result is
# said either way: "NCCL backend: ON (<library>)" or "NCCL backend: OFF (<why>)".
#
# ember_find_nccl(<prefix> CUDA <ON|OFF> [TOOLKIT_DIRS dir...] [NO_PIP] [NO_SYSTEM_PATH])
#   sets <prefix>_FOUND, <prefix>_INCLUDE_DIR, <prefix>_LIBRARY and <prefix>_STATUS (the
#   text after "NCCL backend: ") in the caller's scope. Search order, first hit wins:
#   NCCL_INCLUDE_DIR / NCCL_LIBRARY as given; NCCL_ROOT (variable, then environment), then
#   NCCL_HOME (environment); the CUDA toolkit (TOOLKIT_DIRS); the pip wheel of the Python
#   on PATH (or Python3_EXECUTABLE, or $VIRTUAL_ENV) unless NO_PIP; the system paths unless
#   NO_SYSTEM_PATH. NO_PIP and NO_SYSTEM_PATH are for tests/nccl_find.cmake, which runs
#   this file on made-up layouts.

# The nvidia/nccl directory of a pip wheel, as the given Python interpreters see it ("" if none).
function(ember_nccl_pip_dir out)
  set(pythons ${ARGN})
  set(${out} "" PARENT_SCOPE)
  foreach(python IN LISTS pythons)
    if(NOT python)
      continue()
    endif()
    # nvidia.nccl is a namespace package: its __path__ lists the wheel's directory.
    execute_process(COMMAND ${python} -c "import nvidia.nccl as n; print(list(n.__path__)[0])"
                    OUTPUT_VARIABLE dir OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE failed
                    TIMEOUT 20)
    if(NOT failed AND IS_DIRECTORY "${dir}")
      set(${out} "${dir}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
endfunction()

function(ember_find_nccl prefix)
  cmake_parse_arguments(PARSE_ARGV 1 arg "NO_PIP;NO_SYSTEM_PATH" "CUDA" "TOOLKIT_DIRS")
  set(found OFF)
  set(include_dir "")
  set(library "")
  if(NOT arg_CUDA)
    set(status "OFF (the CUDA backend is off: NCCL needs it)")
  else()
    set(roots "")
    foreach(root "${NCCL_ROOT}" "$ENV{NCCL_ROOT}" "$ENV{NCCL_HOME}")
      if(root)
        list(APPEND roots "${root}")
      endif()
    endforeach()
    list(APPEND roots ${arg_TOOLKIT_DIRS})
    if(NOT arg_NO_PIP)
      find_program(ember_python3 NAMES python3 python NO_CACHE)
      set(pythons "${Python3_EXECUTABLE}")
      if(DEFINED ENV{VIRTUAL_ENV})
        list(APPEND pythons "$ENV{VIRTUAL_ENV}/bin/python")
      endif()
      list(APPEND pythons "${ember_python3}")
      ember_nccl_pip_dir(pip_dir ${pythons})
      if(pip_dir)
        list(APPEND roots "${pip_dir}")
      endif()
    endif()
    # The versioned name last: a pip wheel has only libnccl.so.2 (the full file name is
    # tried as given, so it is found also where CMake knows no library suffixes).
    set(names nccl libnccl.so libnccl.so.2)
    if(NCCL_INCLUDE_DIR AND EXISTS "${NCCL_INCLUDE_DIR}/nccl.h")
      set(include_dir "${NCCL_INCLUDE_DIR}")
    else()
      find_path(ember_nccl_include nccl.h HINTS ${roots} PATH_SUFFIXES include NO_DEFAULT_PATH NO_CACHE)
      if(NOT ember_nccl_include AND NOT arg_NO_SYSTEM_PATH)
        find_path(ember_nccl_include nccl.h NO_CACHE)
      endif()
      if(ember_nccl_include)
        string(REGEX REPLACE "/+$" "" include_dir "${ember_nccl_include}")  # HINTS keep a trailing slash
      endif()
    endif()
    if(NCCL_LIBRARY AND EXISTS "${NCCL_LIBRARY}")
      set(library "${NCCL_LIBRARY}")
    else()
      find_library(ember_nccl_library NAMES ${names} HINTS ${roots} PATH_SUFFIXES lib lib64 NO_DEFAULT_PATH NO_CACHE)
      if(NOT ember_nccl_library AND NOT arg_NO_SYSTEM_PATH)
        find_library(ember_nccl_library NAMES ${names} NO_CACHE)
      endif()
      if(ember_nccl_library)
        set(library "${ember_nccl_library}")
      endif()
    endif()
    string(REPLACE ";" ", " searched "${roots}")
    if(NOT searched)
      set(searched "no NCCL_ROOT, toolkit or pip wheel")
    endif()
    if(include_dir AND library)
      set(found ON)
      set(status "ON (${library})")
    elseif(library)
      set(status "OFF (found ${library} but no nccl.h; searched ${searched}; set NCCL_INCLUDE_DIR)")
    elseif(include_dir)
      string(CONCAT status "OFF (found ${include_dir}/nccl.h but no libnccl.so or libnccl.so.2; searched ${searched}; "
                          "set NCCL_LIBRARY)")
    else()
      string(CONCAT status "OFF (no nccl.h or libnccl found; searched ${searched}; set NCCL_ROOT, or NCCL_INCLUDE_DIR "
                          "and NCCL_LIBRARY, or pip install nvidia-nccl-cu12)")
    endif()
  endif()
  set(${prefix}_FOUND ${found} PARENT_SCOPE)
  set(${prefix}_INCLUDE_DIR "${include_dir}" PARENT_SCOPE)
  set(${prefix}_LIBRARY "${library}" PARENT_SCOPE)
  set(${prefix}_STATUS "${status}" PARENT_SCOPE)
endfunction()
