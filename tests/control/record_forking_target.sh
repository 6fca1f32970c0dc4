#!/usr/bin/env bash
# record_counts_the_pid_alone_unless_asked: control_target --forking 1 keeps
# forking children that spin in child_spin while its own threads idle. perf
# follows the children, but `jitframes record PID`'s summary and flame graph
# are PID's alone, and say how many samples of children were left out;
# with --children they count them (child_spin is then the hottest function
# of the process's own code).
# Usage: record_forking_target.sh JITFRAMES_TOOL CONTROL_TARGET BUILD_DIR
set -uo pipefail
tool=$(realpath "$1") target=$(realpath "$2") build=$3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../support/record_env.sh"

mkfifo "$work/stdin"
env -u JITFRAMES JITFRAMES_CONTROL=1 JITFRAMES_DIR="$work" "$target" --forking 1 --regions 10 \
  <"$work/stdin" >"$work/target.out" 2>&1 &
pids+=("$!")
exec 3>"$work/stdin"  # the target runs until this closes
for _ in $(seq 200); do grep -q ready "$work/target.out" && break; sleep 0.05; done
pid=$(awk '/^ready/ {print $2}' "$work/target.out")
[ -n "$pid" ] || fail "control_target did not start: $(cat "$work/target.out")"
on_exit='rm -f /tmp/perf-"$pid".map'

# record NAME ARGS...: record the target for 2 s; the log is $work/NAME.log.
record() {
  local name=$1; shift
  "$tool" record "$pid" --via channel --duration 2 -o "$work/$name" "$@" >"$work/$name.log" 2>&1 ||
    { cat "$work/$name.log"; fail "$name: record failed"; }
  grep -v '^recording' "$work/$name.log"
  debug_cache_unchanged "$name"
}

record alone
grep -A8 "most sampled" "$work/alone.log" | grep -q child_spin && fail "alone: the summary counts the children's child_spin"
grep -q child_spin "$work/alone/flamegraph.html" && fail "alone: the flame graph shows the children's child_spin"
left_out=$(sed -n 's/^ *\([0-9]*\) samples of processes it forked are left out.*/\1/p' "$work/alone.log")
[ "${left_out:-0}" -gt 0 ] || fail "alone: record does not say how many samples of children it left out"

record children --children
grep -A8 "most sampled" "$work/children.log" | grep -q child_spin || fail "--children: the summary does not count child_spin"
grep -q child_spin "$work/children/flamegraph.html" || fail "--children: the flame graph does not show child_spin"
grep -q "left out" "$work/children.log" && fail "--children: says samples were left out"
exec 3>&-
echo PASS
