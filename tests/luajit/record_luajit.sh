#!/usr/bin/env bash
# Stock LuaJIT with the module loaded, profiled from outside with `jitframes
# record PID`:
# - channel: in standby (JITFRAMES_CONTROL=1, no sink: `luajit -l
#   jitframes`), through the control channel: nothing written before, the
#   flame graph names its compiled traces (TRACE_<n>::hot.lua:<line>), and
#   afterwards the sinks are as before and nothing is left behind.
# - memory (record_names_luajit_traces_from_memory): with no JITFRAMES*
#   variable at all (standby without a channel), read from its published
#   table (the summary says "via memory"): the flame graph names its traces,
#   perf script gives their source lines, nothing is written in /tmp or
#   ~/.debug. (Its traces register no unwind info, through the channel
#   either: DWARF chains stop in them.)
# Usage: record_luajit.sh MODULE_DIR JITFRAMES_TOOL BUILD_DIR [channel|memory]
set -uo pipefail
module_dir=$(realpath "$1") tool=$(realpath "$2") build=$3 mode=${4:-channel}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../support/record_env.sh"
trap 'kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; cat "$work/lj.out"; exit 1; }

if [ "$mode" = memory ]; then
  touch "$work/began"
  plain=(env)  # no JITFRAMES* variable (env execs luajit: $! is its pid)
  for v in $(env | sed -n 's/^\(JITFRAMES[A-Za-z0-9_]*\)=.*/\1/p'); do plain+=(-u "$v"); done
  "${plain[@]}" LUA_CPATH="$module_dir/?.so;;" luajit -l jitframes "$here/hot.lua" 1000 >"$work/lj.out" 2>&1 &
  pid=$!
  # Its traces compile (and are kept): wait for some, not for a time.
  for _ in $(seq 2400); do "$tool" regions "$pid" 2>/dev/null | grep -q ' TRACE_' && break; sleep 0.05; done
  "$tool" regions "$pid" | grep -q ' TRACE_' || fail "no trace published after 120 s"
  "$tool" status "$pid" >/dev/null 2>&1 && fail "a control channel although nothing asked for one"
  # what the recording could have left in /tmp (older files with the pid: earlier processes')
  left() {
    find /tmp -maxdepth 1 \( -name "perf-$pid.map" -o -name "jit-$pid.dump" -o -name "jitted-$pid-*.so" \) \
      -newer "$work/began" 2>/dev/null
  }
  record_cpu "$work/out" 1000 || { cat "$work/out.log"; fail "record"; }
  cat "$work/out.log"
  grep -q "^  via memory (followed process $pid " "$work/out.log" || fail "the summary does not say it read memory"
  grep -qE '"TRACE_[0-9]+::[^"]*hot\.lua:[0-9]+' "$work/out/flamegraph.html" || fail "the flame graph names no trace"
  perf script -i "$work/out/perf.jit.data" -F ip,sym,srcline --pid "$pid" 2>/dev/null | awk '
    $2 ~ /^TRACE_[0-9]+::/ { getline; t++; if ($1 ~ /^hot\.lua:[0-9]+$/) ok++ }
    END { printf "luajit: %d of %d trace frames have a source line\n", ok, t; exit !(t >= 50 && ok * 100 >= t * 95) }' ||
    fail "no source lines for the traces"
  [ -z "$(left)" ] || fail "left behind: $(left)"
  kill -0 "$pid" || fail "luajit died"
  debug_cache_unchanged record
  echo PASS
  exit 0
fi

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
