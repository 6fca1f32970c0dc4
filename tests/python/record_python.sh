#!/usr/bin/env bash
# A Python program started in standby (JITFRAMES_CONTROL=1: the start-up
# hook calls jitframes.standby(); no hook, no file) and profiled from outside
# with `jitframes record PID`: the frame hook goes in on the interpreter's own
# thread when the recording turns the sinks on, the flame graph names the
# Python function, and afterwards the hook is out again, the sinks are as
# before and nothing is left in /tmp. The package comes from $PYTHONPATH.
# Usage: record_python.sh PYTHON JITFRAMES_TOOL BUILD_DIR
set -uo pipefail
python=$1 tool=$(realpath "$2") build=$3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../support/record_env.sh"
trap 'kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; cat "$work/prog.out"; exit 1; }
# The sanitizer runtime preloaded for the interpreter (tests/python/CMakeLists.txt)
# is for Python only: the tool has its own.
jft() { env -u LD_PRELOAD "$tool" "$@"; }
record_tool=(env -u LD_PRELOAD "$tool")

env -u JITFRAMES JITFRAMES_CONTROL=1 JITFRAMES_DIR="$work" "$python" "$here/standby_hot.py" >"$work/prog.out" 2>&1 &
pid=$!
for _ in $(seq 800); do grep -q "^active False" "$work/prog.out" && break; sleep 0.05; done
grep -q "^active False" "$work/prog.out" || fail "the program did not start in standby"
ls /tmp/perf-$pid.map "$work/jit-$pid.dump" 2>/dev/null && fail "standby wrote files"

# 2 s of the program's CPU time, however long that takes on a busy machine.
record_cpu "$work/out" 2000 --via channel || { cat "$work/out.log"; fail "record"; }
cat "$work/out.log"
grep -q '"py::hot_python_function' "$work/out/flamegraph.html" || fail "the flame graph does not name py::hot_python_function"
grep -A3 "generated code on the stack" "$work/out.log" | grep -qE "^ +[0-9.]+%  py::hot_python_function:" ||
  fail "the summary does not list py::hot_python_function as generated code on the stack"
# Lines: ready, active False (standby), active True (recording), active False.
for _ in $(seq 800); do sed -n '4p' "$work/prog.out" | grep -q "^active False" && break; sleep 0.05; done
cat "$work/prog.out"
sed -n '3p' "$work/prog.out" | grep -q "^active True perfmap,jitdump" || fail "the hook did not go in with the sinks"
sed -n '4p' "$work/prog.out" | grep -q "^active False" || fail "the hook did not go out with the sinks"
jft status "$pid" --json | grep -q '"enabled": \[\]' || fail "sinks left on"
left=$(ls /tmp/perf-$pid.map "$work/jit-$pid.dump" "$work"/jitted-$pid-*.so 2>/dev/null)
[ -z "$left" ] || fail "left behind: $left"
debug_cache_unchanged record
echo PASS
