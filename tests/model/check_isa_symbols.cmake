# Fails unless every symbol the ISA kernel units (model/kernels/kernels_<isa>.cpp) export lies
# in their own renamed namespaces. Any other exported symbol (an Eigen or std:: inline function
# under its usual name) could be merged by the linker with the baseline copy, and then run
# AVX2 or AVX-512 instructions on a CPU without them.
#   cmake -DNM=nm -DOBJECTS="a.o;b.o" -P check_isa_symbols.cmake
if(NOT NM OR NOT OBJECTS)
  message(FATAL_ERROR "check_isa_symbols.cmake: pass -DNM=... and -DOBJECTS=...")
endif()
set(bad "")
foreach(object IN LISTS OBJECTS)
  execute_process(COMMAND ${NM} -C --defined-only --extern-only ${object}
                  OUTPUT_VARIABLE listing RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} failed on ${object}")
  endif()
  string(REPLACE "\n" ";" lines "${listing}")
  set(count 0)
  foreach(line IN LISTS lines)
    if(line STREQUAL "")
      continue()
    endif()
    math(EXPR count "${count} + 1")
    # The personality routine's reference is data every C++ object with exceptions has.
    if(line MATCHES "ranklab_eigen_|ranklab::kernels::|DW\\.ref\\.__gxx_personality_v0")
      continue()
    endif()
    string(APPEND bad "\n  ${object}: ${line}")
  endforeach()
  if(count EQUAL 0)
    message(FATAL_ERROR "${object} exports no symbol at all: not the kernels unit?")
  endif()
endforeach()
if(bad)
  message(FATAL_ERROR "ISA kernel units export symbols outside their namespaces:${bad}")
endif()
message(STATUS "ISA kernel units export only their own symbols")
