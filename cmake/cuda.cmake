# CUDA devices (issue 13, `--device cuda`). RANKLAB_CUDA:
#   AUTO  with CMake's FindCUDAToolkit when it finds a toolkit (the default); without one
#         nothing CUDA is built and everything else, tests included, is unchanged
#   ON    required: configuring fails without a CUDA toolkit
#   OFF   never built
# Sets RANKLAB_HAVE_CUDA. The CUDA device itself (cuBLAS GEMMs, small kernels, pinned host
# buffers, a stream per rank) is not written yet: the model's tensors are Eigen matrices in
# host-addressable memory (model/device.hpp), and a GPU needs a device tensor type first. So
# a toolkit found is reported and not used, and ON says so, rather than build a device that
# never ran.
set(RANKLAB_CUDA AUTO CACHE STRING "Build the CUDA device: AUTO, ON or OFF")
set_property(CACHE RANKLAB_CUDA PROPERTY STRINGS AUTO ON OFF)
string(TOUPPER "${RANKLAB_CUDA}" _ranklab_cuda)
if(NOT _ranklab_cuda MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "RANKLAB_CUDA is '${RANKLAB_CUDA}': expected AUTO, ON or OFF")
endif()

set(RANKLAB_HAVE_CUDA OFF)
if(NOT _ranklab_cuda STREQUAL "OFF")
  find_package(CUDAToolkit QUIET)
  if(NOT CUDAToolkit_FOUND)
    if(_ranklab_cuda STREQUAL "ON")
      message(FATAL_ERROR "RANKLAB_CUDA=ON, but CMake's FindCUDAToolkit found no CUDA toolkit "
                          "(install one, or set CUDAToolkit_ROOT)")
    endif()
    message(STATUS "ranklab: no CUDA toolkit found, --device cuda is not built (RANKLAB_CUDA=AUTO)")
  elseif(_ranklab_cuda STREQUAL "ON")
    message(FATAL_ERROR "RANKLAB_CUDA=ON: CUDA toolkit ${CUDAToolkit_VERSION} found, but "
                        "ranklab's CUDA device is not written yet (cmake/cuda.cmake says why)")
  else()
    message(STATUS "ranklab: CUDA toolkit ${CUDAToolkit_VERSION} found, but ranklab's CUDA "
                   "device is not written yet: --device cuda is not built")
  endif()
endif()
