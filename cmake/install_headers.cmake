# Run by `cmake --install` (cmake/install.cmake sets RANKLAB_SOURCE_DIR,
# RANKLAB_HEADER_MODULES and RANKLAB_INCLUDE_DESTINATION): copies every module's headers to
# include/ranklab/<module>/, their project includes rewritten from "traces/x.hpp" to
# "ranklab/traces/x.hpp" so that they resolve with include/ alone on the user's path.
set(root "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}/${RANKLAB_INCLUDE_DESTINATION}")
string(JOIN "|" modules ${RANKLAB_HEADER_MODULES})
foreach(module ${RANKLAB_HEADER_MODULES})
  file(GLOB_RECURSE headers RELATIVE "${RANKLAB_SOURCE_DIR}" "${RANKLAB_SOURCE_DIR}/${module}/*.hpp")
  foreach(header ${headers})
    file(READ "${RANKLAB_SOURCE_DIR}/${header}" text)
    string(REGEX REPLACE "#include \"(${modules})/" "#include \"ranklab/\\1/" text "${text}")
    message(STATUS "Installing: ${root}/${header}")
    file(WRITE "${root}/${header}" "${text}")
  endforeach()
endforeach()
