#!/usr/bin/env bash
# Stock LuaJIT with the module loaded in standby (JITFRAMES_CONTROL=1, no
# sink: `luajit -l jitframes`), profiled from outside with `jitframes record
# PID`: nothing written before, the flame graph names its compiled traces
# (TRACE_<n>::hot.lua:<line>), and afterwards the sinks are as before and
# nothing is left behind.
# Usage: record_luajit.sh MODULE_DIR JITFRAMES_TOOL BUILD_DIR
set -uo pipefail
module_dir=$(realpath "$1") tool=$(realpath "$2") build=$3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../support/record_env.sh"
trap 'kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; cat "$work/lj.out"; exit 1; }

env -u JITFRAMES JITFRAMES_CONTROL=1 JITFRAMES_DIR="$work" LUA_CPATH="$module_dir/?.so;;" \
  luajit -l jitframes "$here/hot.lua" 1000 >"$work/lj.out" 2>&1 &
pid=$!
for _ in $(seq 800); do "$tool" status "$pid" >/dev/null 2>&1 && break; sleep 0.05; done
"$tool" status "$pid" || fail "luajit does not listen"
# Its traces compile (and are kept, in standby): wait for some, not for a time.
for _ in $(seq 2400); do "$tool" status "$pid" --json | grep -q '"live_regions": [1-9]' && break; sleep 0.05; done
"$tool" status "$pid" --json | grep -q '"live_regions": [1-9]' || fail "no trace kept in standby after 120 s"
left() { ls /tmp/perf-$pid.map "$work/jit-$pid.dump" "$work"/jitted-$pid-*.so 2>/dev/null; }
[ -z "$(left)" ] || fail "standby wrote: $(left)"
# 1 s of luajit's CPU time, however long that takes on a busy machine.
record_cpu "$work/out" 1000 --via channel || { cat "$work/out.log"; fail "record"; }
cat "$work/out.log"
grep -qE '"TRACE_[0-9]+::[^"]*hot\.lua:[0-9]+' "$work/out/flamegraph.html" || fail "the flame graph names no trace"
"$tool" status "$pid" --json | grep -q '"enabled": \[\]' || fail "sinks left on"
[ -z "$(left)" ] || fail "left behind: $(left)"
kill -0 "$pid" || fail "luajit died"
debug_cache_unchanged record
echo PASS
