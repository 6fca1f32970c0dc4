# gdb and lldb on Python code under the client: the backtrace names every
# Python function with its file:line (debugger_bt.py: three functions after
# 40 others; debugger_chain.py: every frame of a 10- and a 100-deep chain).
foreach(debugger IN ITEMS gdb lldb)
  foreach(sinks IN ITEMS gdb gdb,jitdump)
    string(REPLACE "," "_" suffix ${sinks})
    jitframes_python_test(python_${debugger}_bt_${suffix} "consumer"
                          @PYTHON@ ${CMAKE_CURRENT_SOURCE_DIR}/debugger_bt.py ${debugger} ${sinks})
    jitframes_python_test(python_${debugger}_names_every_frame_of_a_chain_${suffix} "consumer"
                          @PYTHON@ ${CMAKE_CURRENT_SOURCE_DIR}/debugger_chain.py ${debugger} ${sinks} 10 100)
  endforeach()
endforeach()
