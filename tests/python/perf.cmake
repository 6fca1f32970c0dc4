# perf itself on Python programs under the client (perf_python.sh).
foreach(mode IN ITEMS perfmap jitdump)
  jitframes_python_test(python_perf_${mode} "consumer;nosanitize"
                        ${CMAKE_CURRENT_SOURCE_DIR}/perf_python.sh @PYTHON@ ${mode})
endforeach()
