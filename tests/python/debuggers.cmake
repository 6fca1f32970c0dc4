# gdb and lldb on Python code under the client (debugger_bt.py): the
# backtrace names every Python function with its file:line.
foreach(debugger IN ITEMS gdb lldb)
  foreach(sinks IN ITEMS gdb gdb,jitdump)
    string(REPLACE "," "_" suffix ${sinks})
    jitframes_python_test(python_${debugger}_bt_${suffix} "consumer"
                          @PYTHON@ ${CMAKE_CURRENT_SOURCE_DIR}/debugger_bt.py ${debugger} ${sinks})
  endforeach()
endforeach()
