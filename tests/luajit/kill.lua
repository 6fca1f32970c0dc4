-- Makes traces, says how many were registered (traces.lua), then SIGKILLs itself.
dofile((arg[0]:match("^(.*/)") or "./") .. "traces.lua")
os.execute("kill -9 $PPID")
