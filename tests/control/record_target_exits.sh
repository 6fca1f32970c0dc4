#!/usr/bin/env bash
# record_cleans_up_after_a_target_that_exits: minijit, started in standby,
# is killed (SIGKILL) while `jitframes record` records it. record still
# removes the perf map and the jitdump the recording made it write (through
# the directories it opened before the recording, as /proc/PID/root is gone
# with the process), perf inject's jitted-*.so files are in the output
# directory and nowhere else, perf.jit.data names the JIT code, record exits
# 0 and says nothing was left. With --keep, the same files stay and perf
# can still name everything after the process is gone.
# Usage: record_target_exits.sh JITFRAMES_TOOL MINIJIT BUILD_DIR
set -uo pipefail
tool=$(realpath "$1") minijit=$(realpath "$2") build=$3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../support/record_env.sh"
on_exit='rm -f /tmp/perf-"$pid".map /tmp/jitted-"$pid"-*.so'

# record_until_killed NAME [ARGS...]: record minijit, SIGKILL it once the
# recording has its jitdump and some samples, then end the recording (SIGINT).
record_until_killed() {
  local name=$1; shift
  dumps=$work/$name.dumps; mkdir -p "$dumps"
  env -u JITFRAMES JITFRAMES_CONTROL=1 JITFRAMES_DIR="$dumps" "$minijit" --seconds 600 >"$work/$name.out" 2>&1 &
  pid=$!; pids+=("$pid")
  for _ in $(seq 200); do "$tool" status "$pid" >/dev/null 2>&1 && break; sleep 0.05; done
  out=$work/$name; log=$work/$name.log
  "$tool" record "$pid" --via channel --duration 600 -o "$out" "$@" >"$log" 2>&1 &
  local rec=$!; pids+=("$rec")
  for _ in $(seq 600); do
    [ -e "$dumps/jit-$pid.dump" ] && [ "$(stat -c %s "$out/perf.data" 2>/dev/null || echo 0)" -gt 100000 ] && break
    sleep 0.05
  done
  [ -e "$dumps/jit-$pid.dump" ] || fail "$name: record did not turn the jitdump on: $(cat "$log")"
  kill -KILL "$pid"; wait "$pid" 2>/dev/null
  [ -e "/tmp/perf-$pid.map" ] || fail "$name: the killed process left no perf map to clean up"
  kill -INT "$rec"
  for _ in $(seq 1200); do kill -0 "$rec" 2>/dev/null || break; sleep 0.05; done
  wait "$rec"; rc=$?
  echo "--- $name: record exit status $rc"; cat "$log"
  ! grep -q Traceback "$log" || fail "$name: a Python traceback"
}

# names_jit_code: perf.jit.data names minijit's JIT functions from the .so
# files in the output directory.
names_jit_code() {
  [ -s "$out/perf.jit.data" ] || fail "$1: no perf.jit.data"
  ls "$out"/jit/jitted-"$pid"-*.so >/dev/null 2>&1 || fail "$1: no jitted-$pid-*.so in $out/jit"
  perf script -i "$out/perf.jit.data" -F ip,sym,dso >"$out.script" 2>/dev/null
  grep -qE "mj_(frameless|framed|stencils|lines) \($out/jit/jitted-$pid-[0-9]+\.so\)" "$out.script" ||
    fail "$1: perf.jit.data does not name the JIT code from $out/jit"
}

record_until_killed exits
[ "$rc" -eq 0 ] || fail "record failed"
[ ! -e "/tmp/perf-$pid.map" ] || fail "left /tmp/perf-$pid.map"
[ ! -e "$dumps/jit-$pid.dump" ] || fail "left $dumps/jit-$pid.dump"
left=$(ls "$dumps" /tmp | grep -E "jitted-$pid-")
[ -z "$left" ] || fail "jitted-*.so outside the output directory: $left"
! grep -q "left " "$log" || fail "record says it left something"
names_jit_code exits
debug_cache_unchanged exits

# --keep: the files stay, and the recording still reads after the process is gone.
record_until_killed keep --keep
[ "$rc" -eq 0 ] || fail "--keep: record failed"
[ -s "/tmp/perf-$pid.map" ] && [ -s "$dumps/jit-$pid.dump" ] || fail "--keep: the perf map or the jitdump is gone"
names_jit_code --keep
rm -f "/tmp/perf-$pid.map"
echo PASS
