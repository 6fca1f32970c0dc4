#!/bin/sh
# exec_with_fresh_map.sh PID_FILE PROGRAM ARGS...   (PID_FILE "-": none)
# Become PROGRAM (same pid, so `perf record -- exec_with_fresh_map.sh ...`
# records it) after writing that pid to PID_FILE and removing
# /tmp/perf-<pid>.map. A fresh container reuses pids quickly: a map left by a
# dead process with this pid would otherwise be read as this run's, and make
# a negative control ("no map written", "no name shown") fail or pass wrongly.
pid_file=$1
shift
[ "$pid_file" = - ] || echo $$ >"$pid_file"
rm -f "/tmp/perf-$$.map"
exec "$@"
