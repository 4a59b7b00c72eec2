# tests/distributed/check_find_nccl.cmake — ember_find_nccl (distributed/find_nccl.cmake) on
# made-up NCCL layouts: the toolkit's (libnccl.so), a pip wheel's (libnccl.so.2 only, found
# through NCCL_ROOT or through the Python that has the wheel), NCCL_ROOT from the
# environment, NCCL_INCLUDE_DIR + NCCL_LIBRARY as given, and the OFF cases with their why.
# Run by CTest: cmake -DSOURCE_DIR=... -DWORK=<scratch dir> -P this file. The real system
# paths are never searched (NO_SYSTEM_PATH, NO_PIP where a fake Python is not the point),
# so the machine's own NCCL cannot make a case pass.
include(${SOURCE_DIR}/distributed/find_nccl.cmake)

set(failures 0)
function(expect what actual expected)
  if(NOT "${actual}" MATCHES "${expected}")
    message(SEND_ERROR "${what}: got '${actual}', expected to match '${expected}'")
  else()
    message(STATUS "ok: ${what}")
  endif()
endfunction()

file(REMOVE_RECURSE ${WORK})
# A pip wheel: nvidia/nccl/{include/nccl.h, lib/libnccl.so.2}, no unversioned link.
set(wheel ${WORK}/site-packages/nvidia/nccl)
file(WRITE ${wheel}/include/nccl.h "/* fake */\n")
file(WRITE ${wheel}/lib/libnccl.so.2 "fake")
# A toolkit: include/nccl.h, lib64/libnccl.so.
file(WRITE ${WORK}/toolkit/include/nccl.h "/* fake */\n")
file(WRITE ${WORK}/toolkit/lib64/libnccl.so "fake")
# Half an install: a header and no library.
file(WRITE ${WORK}/header_only/include/nccl.h "/* fake */\n")
file(MAKE_DIRECTORY ${WORK}/empty)
# A Python whose nvidia.nccl is the wheel above (what ember_nccl_pip_dir asks).
file(WRITE ${WORK}/bin/python "#!/bin/sh\necho ${wheel}\n")
file(CHMOD ${WORK}/bin/python PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
unset(ENV{NCCL_ROOT})
unset(ENV{NCCL_HOME})

set(NCCL_ROOT ${wheel})
ember_find_nccl(r CUDA ON NO_PIP NO_SYSTEM_PATH)
expect("pip wheel via NCCL_ROOT: found" "${r_FOUND}" "^ON$")
expect("pip wheel via NCCL_ROOT: the versioned library" "${r_LIBRARY}" "^${wheel}/lib/libnccl\\.so\\.2$")
expect("pip wheel via NCCL_ROOT: header dir" "${r_INCLUDE_DIR}" "^${wheel}/include$")
expect("pip wheel via NCCL_ROOT: status" "${r_STATUS}" "^ON \\(${wheel}/lib/libnccl\\.so\\.2\\)$")
unset(NCCL_ROOT)

ember_find_nccl(r CUDA ON TOOLKIT_DIRS ${WORK}/toolkit NO_PIP NO_SYSTEM_PATH)
expect("toolkit layout: library" "${r_LIBRARY}" "^${WORK}/toolkit/lib64/libnccl\\.so$")
expect("toolkit layout: found" "${r_FOUND}" "^ON$")

set(ENV{NCCL_ROOT} ${WORK}/toolkit)
ember_find_nccl(r CUDA ON NO_PIP NO_SYSTEM_PATH)
expect("NCCL_ROOT in the environment" "${r_LIBRARY}" "^${WORK}/toolkit/lib64/libnccl\\.so$")
unset(ENV{NCCL_ROOT})

set(Python3_EXECUTABLE ${WORK}/bin/python)
ember_find_nccl(r CUDA ON TOOLKIT_DIRS ${WORK}/empty NO_SYSTEM_PATH)
expect("the pip wheel of the Python found" "${r_LIBRARY}" "^${wheel}/lib/libnccl\\.so\\.2$")
unset(Python3_EXECUTABLE)

set(NCCL_INCLUDE_DIR ${WORK}/header_only/include)
set(NCCL_LIBRARY ${wheel}/lib/libnccl.so.2)
ember_find_nccl(r CUDA ON NO_PIP NO_SYSTEM_PATH)
expect("NCCL_INCLUDE_DIR and NCCL_LIBRARY as given" "${r_INCLUDE_DIR};${r_LIBRARY}"
       "^${WORK}/header_only/include;${wheel}/lib/libnccl\\.so\\.2$")
unset(NCCL_INCLUDE_DIR)
unset(NCCL_LIBRARY)

ember_find_nccl(r CUDA ON TOOLKIT_DIRS ${WORK}/empty NO_PIP NO_SYSTEM_PATH)
expect("nothing anywhere: OFF" "${r_FOUND}" "^OFF$")
expect("nothing anywhere: the why" "${r_STATUS}" "^OFF \\(no nccl\\.h or libnccl found; searched ${WORK}/empty; set NCCL_ROOT")

ember_find_nccl(r CUDA ON TOOLKIT_DIRS ${WORK}/header_only NO_PIP NO_SYSTEM_PATH)
expect("a header and no library: OFF" "${r_FOUND}" "^OFF$")
expect("a header and no library: the why" "${r_STATUS}" "^OFF \\(found ${WORK}/header_only/include/nccl\\.h but no libnccl")

ember_find_nccl(r CUDA OFF TOOLKIT_DIRS ${WORK}/toolkit)
expect("CUDA off: OFF with the why" "${r_STATUS}" "^OFF \\(the CUDA backend is off")
