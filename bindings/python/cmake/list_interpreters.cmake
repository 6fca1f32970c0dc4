# cmake -P list_interpreters.cmake: prints the interpreters CMake would build
# the extension for (FindInterpreters.cmake's candidates that pass its probe),
# one a line, for scripts/python-wheels.
include(${CMAKE_CURRENT_LIST_DIR}/FindInterpreters.cmake)
jitframes_python_candidates(candidates)
foreach(python IN LISTS candidates)
  jitframes_python_probe(${python} info)
  if(info)
    execute_process(COMMAND ${CMAKE_COMMAND} -E echo ${python})
  endif()
endforeach()
