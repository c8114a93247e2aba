# Steps of InstallTest, each failing the test with its own output.
function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
endfunction()

file(REMOVE_RECURSE ${PREFIX} ${CONSUMER_BUILD})
step(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX})
set(consumer_flags)
if(SANITIZE)
  set(consumer_flags -DCMAKE_CXX_FLAGS=-fsanitize=${SANITIZE}
                     -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=${SANITIZE})
endif()
step(${CMAKE_COMMAND} -S ${CONSUMER_SOURCE} -B ${CONSUMER_BUILD} -DCMAKE_PREFIX_PATH=${PREFIX}
     -DCMAKE_BUILD_TYPE=Release ${consumer_flags})
step(${CMAKE_COMMAND} --build ${CONSUMER_BUILD})
# LAUNCHER: what runs the consumer, '|'-separated (tests/mpi: mpirun.sh MPIEXEC NP).
string(REPLACE "|" ";" launcher "${LAUNCHER}")
step(${launcher} ${CONSUMER_BUILD}/consumer)
