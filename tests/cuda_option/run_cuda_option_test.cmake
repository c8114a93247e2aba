# RANKLAB_CUDA without a CUDA toolkit: AUTO configures and builds nothing CUDA; ON fails at
# configure, naming the toolkit; a bad value fails naming the three. A toolkit installed on
# the machine is hidden from the probe (CMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit), so the test
# means the same everywhere.
# -DSOURCE=ranklab's source tree -DWORK=a scratch folder.
function(configure value out_result out_output)
  file(REMOVE_RECURSE ${WORK}/${value})
  execute_process(
    COMMAND ${CMAKE_COMMAND} -S ${SOURCE}/tests/cuda_option/probe -B ${WORK}/${value}
            -DRANKLAB_SOURCE=${SOURCE} -DRANKLAB_CUDA=${value}
            -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=TRUE
    RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE errors)
  set(${out_result} ${result} PARENT_SCOPE)
  set(${out_output} "${output}${errors}" PARENT_SCOPE)
endfunction()

configure(AUTO result output)
if(NOT result EQUAL 0 OR NOT output MATCHES "probe: RANKLAB_HAVE_CUDA=OFF")
  message(FATAL_ERROR "RANKLAB_CUDA=AUTO without a toolkit should configure without CUDA:\n${output}")
endif()
configure(ON result output)
if(result EQUAL 0 OR NOT output MATCHES "RANKLAB_CUDA=ON, but CMake's FindCUDAToolkit found no CUDA toolkit")
  message(FATAL_ERROR "RANKLAB_CUDA=ON without a toolkit should fail at configure:\n${output}")
endif()
configure(MAYBE result output)
if(result EQUAL 0 OR NOT output MATCHES "expected AUTO, ON or OFF")
  message(FATAL_ERROR "RANKLAB_CUDA=MAYBE should fail naming the values:\n${output}")
endif()
message(STATUS "RANKLAB_CUDA: AUTO, ON and MAYBE behave")
