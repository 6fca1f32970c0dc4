#!/usr/bin/env bash
# `jitframes record PID` against running programs started in standby
# (JITFRAMES_CONTROL=1, no sink): minijit (a JIT, jitdump and DWARF call
# chains) and minivm (an interpreter with trampolines, perf map and frame
# pointers). Before: nothing written. record: exit 0, perf.data and a flame
# graph page naming their functions. After: the sinks are as before (none),
# the perf map, jitdump and jitted-*.so it caused are gone (`jitframes clean`
# finds nothing left to remove), ~/.debug is as it was (perf's build-id cache
# is kept in the output directory), the program runs on. Ctrl-C (SIGINT) ends a
# long recording early and still gives the result; a sink that cannot start
# fails it and leaves no sink on; and minijit in a container (its own pid and
# mount namespaces, a private /tmp) is recorded from outside.
# Usage: record.sh JITFRAMES_TOOL MINIJIT MINIVM CALLS_MVM BUILD_DIR
set -uo pipefail
tool=$(realpath "$1") minijit=$(realpath "$2") minivm=$(realpath "$3") calls=$(realpath "$4") build=$5
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../support/record_env.sh"

# start NAME COMMAND...: run in standby; sets pid, and waits until it listens.
start() {
  local name=$1; shift
  mkdir -p "$work/$name.dumps"
  env -u JITFRAMES JITFRAMES_CONTROL=1 JITFRAMES_DIR="$work/$name.dumps" "$@" >"$work/$name.out" 2>&1 &
  pid=$!; pids+=("$pid")
  for _ in $(seq 800); do
    "$tool" status "$pid" >/dev/null 2>&1 && { forget_stale_files "$pid"; return 0; }
    sleep 0.05
  done
  fail "$name does not listen: $(cat "$work/$name.out")"
}

# litter PID NAME: the files a recording of PID could leave outside its DIR.
litter() {
  ls "/tmp/perf-$1.map" "$work/$2.dumps/jit-$1.dump" "$work/$2.dumps"/jitted-"$1"-*.so 2>/dev/null
}

# check_recording NAME OUT PATTERN: the page names functions matching PATTERN.
check_recording() {
  local name=$1 out=$2 pattern=$3
  [ -s "$out/perf.data" ] || fail "$name: no perf.data"
  [ -s "$out/flamegraph.html" ] || fail "$name: no flamegraph.html"
  grep -qE "$pattern" "$out/flamegraph.html" || fail "$name: the flame graph names nothing like $pattern"
  grep -q 'd3-flame-graph' "$out/flamegraph.html" || fail "$name: the page has no flame graph code inlined"
}

# check_after NAME: sinks back as before (none), no litter, still running.
check_after() {
  local name=$1
  "$tool" status "$pid" --json | grep -q '"enabled": \[\]' || fail "$name: sinks left on: $("$tool" status "$pid")"
  [ -z "$(litter "$pid" "$name")" ] || fail "$name: left behind: $(litter "$pid" "$name")"
  out=$("$tool" clean --dry-run --dir /tmp --dir "$work/$name.dumps" | grep -E "(perf|jit|jitted)-$pid[.-]")
  [ -z "$out" ] || fail "$name: clean would still remove: $out"
  kill -0 "$pid" || fail "$name: the program died"
  debug_cache_unchanged "$name"
}

# minijit: its JIT code, with DWARF call chains through it (the default).
start minijit "$minijit" --seconds 60
[ -z "$(litter "$pid" minijit)" ] || fail "standby wrote: $(litter "$pid" minijit)"
record_cpu "$work/mj" 2000 --via channel || { cat "$work/mj.log"; fail "record minijit"; }
cat "$work/mj.log"
[ -s "$work/mj/perf.jit.data" ] || fail "minijit: no perf.jit.data (perf inject --jit)"
grep -q "^  via channel (sinks turned on: jitdump,perfmap)" "$work/mj.log" || fail "minijit: the summary does not say it went through the channel"
check_recording minijit "$work/mj" '"mj_(frameless|framed|stencils|lines)"'
perf script -i "$work/mj/perf.jit.data" -F ip,sym 2>/dev/null | awk '
  BEGIN { RS = ""; FS = "\n" } $1 ~ / mj_frameless$/ { t++; if ($0 ~ /c_caller_frameless/ && $0 ~ / main/) ok++ }
  END { printf "minijit: %d of %d samples in mj_frameless unwind to main\n", ok, t; exit !(t >= 50 && ok * 100 >= t * 95) }' ||
  fail "minijit: DWARF chains do not go through the JIT code"
check_after minijit

# Ctrl-C: a 60 s recording interrupted after 1 s of the program's CPU time
# still gives the result.
record_cpu "$work/mj-int" 1000 --via channel --duration 60 || { cat "$work/mj-int.log"; fail "record after SIGINT"; }
cat "$work/mj-int.log"
grep -q "(ended early)" "$work/mj-int.log" || fail "record does not say it ended early"
check_recording "minijit, interrupted" "$work/mj-int" '"mj_(frameless|framed|stencils|lines)"'
check_after minijit

# A sink that cannot start (the jitdump's directory is gone): record fails,
# says why, and leaves no sink on (the perf map it turned on goes off again).
rmdir "$work/minijit.dumps" 2>/dev/null || rm -rf "$work/minijit.dumps"
"$tool" record "$pid" --via channel --duration 1 -o "$work/mj-fail" >"$work/mj-fail.log" 2>&1 && fail "record succeeded without a jitdump"
cat "$work/mj-fail.log"
grep -q "jitdump" "$work/mj-fail.log" || fail "record does not say the jitdump failed"
"$tool" status "$pid" --json | grep -q '"enabled": \[\]' || fail "a failed record left sinks on: $("$tool" status "$pid")"
rm -f "/tmp/perf-$pid.map"
kill "$pid"

# In a container: minijit in its own pid and mount namespaces with a private
# /tmp, recorded from outside as root by the pid seen here. perf reads the
# map and the dump in the container's /tmp (perf inject writes its .so
# files there too), and record cleans them up there.
if [ "$(id -u)" -eq 0 ] && unshare --pid --mount --fork sh -c 'mount -t tmpfs tmpfs /tmp' 2>/dev/null; then
  unshare --pid --mount --fork sh -c 'cd "$(dirname "$0")" && mount -t tmpfs tmpfs /tmp &&
    exec env -u JITFRAMES JITFRAMES_CONTROL=1 "./$(basename "$0")" --seconds 60' "$minijit" \
    >"$work/ns.out" 2>&1 &
  job=$!; pids+=("$job")
  for _ in $(seq 200); do
    pid=$(awk '{print $1}' "/proc/$job/task/$job/children" 2>/dev/null)
    [ -n "$pid" ] && "$tool" status "$pid" >/dev/null 2>&1 && break
    sleep 0.05
  done
  pids+=("$pid")
  "$tool" status "$pid" | grep -q "in its own namespace" || fail "container: not in its own namespace"
  record_cpu "$work/ns" 2000 --via channel || { cat "$work/ns.log"; fail "record in a container"; }
  cat "$work/ns.log"
  check_recording "minijit in a container" "$work/ns" '"mj_(frameless|framed|stencils|lines)"'
  [ -s "$work/ns/perf.jit.data" ] || fail "container: no perf.jit.data"
  [ -z "$(ls "/proc/$pid/root/tmp")" ] || fail "container: left in its /tmp: $(ls "/proc/$pid/root/tmp")"
  "$tool" status "$pid" --json | grep -q '"enabled": \[\]' || fail "container: sinks left on"
  # minijit is its pid namespace's init: signals it has no handler for are
  # not delivered from outside, SIGKILL is.
  kill -KILL "$pid"
else
  echo "note: not root, or unshare with a private /tmp is not permitted here: no container case"
fi

# minivm: an interpreter's trampolines, with the perf map and frame pointers.
start minivm "$minivm" "$calls" 100000000
[ -z "$(litter "$pid" minivm)" ] || fail "standby wrote: $(litter "$pid" minivm)"
record_cpu "$work/vm" 1000 --via channel --call-graph fp || { cat "$work/vm.log"; fail "record minivm"; }
cat "$work/vm.log"
[ ! -e "$work/vm/perf.jit.data" ] || fail "minivm: --call-graph fp needs no jitdump"
check_recording minivm "$work/vm" '"mvm:(is_even|is_odd|work|compute|parse|digit_sum|helper)'
grep -A8 "generated code on the stack" "$work/vm.log" | grep -qE "^ +[0-9.]+%  mvm:main$" ||
  fail "minivm: the summary does not list mvm:main as generated code on the stack"
check_after minivm
echo PASS
