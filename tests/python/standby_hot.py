# A Python program for the `jitframes record` tests: started in standby by
# JITFRAMES_CONTROL=1, it runs hot_python_function until the test ends it,
# and prints a line each time jitframes turns on or off.
import os, sys, time
import jitframes
jitframes._activate_from_environment()  # what the start-up hook (--install-hook) does
print("ready", os.getpid(), flush=True)

def hot_python_function(n):
    s = 0
    for i in range(n):
        s += i * i
    return s

last = None
end = time.monotonic() + 900  # ended by the test: long enough for a slow machine
while time.monotonic() < end:
    hot_python_function(20000)
    if jitframes.is_active() != last:
        last = jitframes.is_active()
        print("active", last, ",".join(jitframes.active_sinks()), flush=True)
