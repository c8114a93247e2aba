# `cmake --install` produces a package that find_package(ranklab) can use: the libraries,
# their headers under include/ranklab/<module>/, the `ranklab` command, and a config file
# that finds the same Debian packages.
include(CMakePackageConfigHelpers)

set(RANKLAB_EXPORTED_TARGETS ranklab_traces ranklab_comm ranklab_emulator ranklab_collectives)
if(TARGET ranklab_model)
  list(APPEND RANKLAB_EXPORTED_TARGETS ranklab_model)
endif()
install(TARGETS ${RANKLAB_EXPORTED_TARGETS} EXPORT ranklabTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
if(TARGET ranklab)
  install(TARGETS ranklab RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  # `ranklab torchrun`'s side in each Python process, found beside bin/ at run time.
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/ranklab_torch
    DESTINATION ${CMAKE_INSTALL_DATADIR}/ranklab/python PATTERN __pycache__ EXCLUDE)
endif()
# In the source tree the headers include each other as "traces/x.hpp" from the project root;
# installed, they say "ranklab/traces/x.hpp", so the package exports include/ alone and a
# user's own traces/ or model/ folder never meets ranklab's (cmake/install_headers.cmake).
install(CODE "
  set(RANKLAB_SOURCE_DIR \"${PROJECT_SOURCE_DIR}\")
  set(RANKLAB_HEADER_MODULES traces comm emulator collectives model)
  set(RANKLAB_INCLUDE_DESTINATION \"${CMAKE_INSTALL_INCLUDEDIR}/ranklab\")")
install(SCRIPT ${PROJECT_SOURCE_DIR}/cmake/install_headers.cmake)
install(EXPORT ranklabTargets NAMESPACE ranklab:: DESTINATION ${RANKLAB_INSTALL_CMAKEDIR})
# ranklab::mpi in an export set of its own, which the config file loads only when Open MPI is
# found (find_package(ranklab COMPONENTS mpi) requires it): a consumer without MPI still gets
# the rest. Its headers are collectives/mpi/, installed with collectives/ below.
if(TARGET ranklab_mpi)
  install(TARGETS ranklab_mpi EXPORT ranklabMpiTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(EXPORT ranklabMpiTargets NAMESPACE ranklab:: DESTINATION ${RANKLAB_INSTALL_CMAKEDIR})
endif()

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/ranklabConfig.cmake.in
  ${PROJECT_BINARY_DIR}/ranklabConfig.cmake INSTALL_DESTINATION ${RANKLAB_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ranklabConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/ranklabConfig.cmake ${PROJECT_BINARY_DIR}/ranklabConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/FindxxHash.cmake
  DESTINATION ${RANKLAB_INSTALL_CMAKEDIR})
