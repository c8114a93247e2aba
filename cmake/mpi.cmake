# The Open MPI backend (collectives/mpi). RANKLAB_MPI:
#   AUTO  built when find_package(MPI) finds Open MPI's development files (the default)
#   ON    required: configuring fails without them
#   OFF   never built
# Sets RANKLAB_HAVE_MPI, and MPIEXEC_EXECUTABLE for the tests that launch processes.
set(RANKLAB_MPI AUTO CACHE STRING "Build the Open MPI backend: AUTO, ON or OFF")
set_property(CACHE RANKLAB_MPI PROPERTY STRINGS AUTO ON OFF)
string(TOUPPER "${RANKLAB_MPI}" _ranklab_mpi)
if(NOT _ranklab_mpi MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "RANKLAB_MPI is '${RANKLAB_MPI}': expected AUTO, ON or OFF")
endif()

set(RANKLAB_HAVE_MPI OFF)
if(NOT _ranklab_mpi STREQUAL "OFF")
  # The backend is C++ over MPI's C API: FindMPI's CXX component without the deprecated C++
  # bindings, so that neither ranklab nor a find_package(ranklab) consumer needs the C language.
  set(MPI_CXX_SKIP_MPICXX ON)
  find_package(MPI COMPONENTS CXX)
  set(_ranklab_open_mpi OFF)
  if(MPI_CXX_FOUND)
    # Only Open MPI is supported (its error classes, MPI_Comm_create_group, mpirun flags).
    include(CheckCXXSymbolExists)
    set(CMAKE_REQUIRED_INCLUDES ${MPI_CXX_INCLUDE_DIRS})
    set(CMAKE_REQUIRED_DEFINITIONS -DOMPI_SKIP_MPICXX=1)
    check_cxx_symbol_exists(OMPI_MAJOR_VERSION mpi.h RANKLAB_OPEN_MPI_HEADER)
    unset(CMAKE_REQUIRED_INCLUDES)
    unset(CMAKE_REQUIRED_DEFINITIONS)
    set(_ranklab_open_mpi ${RANKLAB_OPEN_MPI_HEADER})
  endif()
  if(_ranklab_open_mpi AND MPIEXEC_EXECUTABLE)
    set(RANKLAB_HAVE_MPI ON)
    message(STATUS "ranklab: building the Open MPI backend (${MPIEXEC_EXECUTABLE})")
  elseif(_ranklab_mpi STREQUAL "ON")
    message(FATAL_ERROR "RANKLAB_MPI=ON, but Open MPI's development files or mpirun were not "
                        "found: apt-get install openmpi-bin libopenmpi-dev")
  else()
    message(STATUS "ranklab: Open MPI not found, the MPI backend is not built (RANKLAB_MPI=AUTO)")
  endif()
endif()
