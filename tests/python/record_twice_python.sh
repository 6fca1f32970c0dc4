#!/usr/bin/env bash
# `jitframes record PID` twice, --via auto (the default), on a Python program
# in standby (JITFRAMES_CONTROL=1): the second recording names the Python
# functions as the first did. The first leaves its trampolines in the
# published table, but in standby CPython's client has its frame hook out,
# so a recording that reads the table (memory) would name nothing: auto must
# take the channel again. Each recording: >= 95% of the samples in Python
# code (a _PyEval_EvalFrameDefault frame) also have a py:: frame.
# Usage: record_twice_python.sh PYTHON JITFRAMES_TOOL BUILD_DIR
set -uo pipefail
python=$1 tool=$(realpath "$2") build=$3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../support/record_env.sh"
record_tool=(env -u LD_PRELOAD "$tool")
fail() { echo "FAIL: $*"; cat "$work/prog.out"; exit 1; }

env -u JITFRAMES JITFRAMES_CONTROL=1 JITFRAMES_DIR="$work" "$python" "$here/standby_hot.py" >"$work/prog.out" 2>&1 &
pid=$!; pids+=("$pid")
for _ in $(seq 800); do env -u LD_PRELOAD "$tool" status "$pid" >/dev/null 2>&1 && break; sleep 0.05; done
env -u LD_PRELOAD "$tool" status "$pid" >/dev/null 2>&1 || fail "the program does not listen on its control channel"

# python_share OUT: "named python" sample counts of the recording in OUT.
python_share() {
  perf --buildid-dir "$work/buildid" script -i "$1/perf.jit.data" -F ip,sym --pid "$pid" 2>/dev/null | awk '
    /^$/ { if (py) { python++; if (named) ok++ } py = named = 0; next }
    /_PyEval_EvalFrameDefault/ { py = 1 }
    / py::/ { named = 1 }
    END { if (py) { python++; if (named) ok++ } printf "%d %d\n", ok, python }'
}
for n in 1 2; do
  record_cpu "$work/rec$n" 2000 || { cat "$work/rec$n.log"; fail "recording $n"; }
  cat "$work/rec$n.log"
  [ -s "$work/rec$n/perf.jit.data" ] || fail "recording $n: no perf.jit.data"
  read -r ok python < <(python_share "$work/rec$n")
  echo "recording $n: $ok of $python samples in Python code have a py:: frame"
  [ "$python" -ge 500 ] || fail "recording $n: only $python samples in Python code"
  [ $((ok * 100)) -ge $((python * 95)) ] || fail "recording $n names $ok of $python Python samples (under 95%)"
  kill -0 "$pid" || fail "the program died"
done
debug_cache_unchanged record_twice
echo PASS
