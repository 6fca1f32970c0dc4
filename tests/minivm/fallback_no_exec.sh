#!/usr/bin/env bash
# The documented fallback on a host that forbids executable memory: with
# JITFRAMES=perfmap, trampoline creation fails (JF_EACCES), minivm prints one
# warning line and runs the program with direct calls, output unchanged.
# Negative control: the same run without the restriction prints no warning.
# Usage: fallback_no_exec.sh DENY_EXEC_MEMORY MINIVM PROGRAMS_DIR
set -u
deny=$1 minivm=$2 programs=$3
tmp=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do rm -f "/tmp/perf-$p.map"; done; rm -rf "$tmp"' EXIT
fail=0

run() { # run NAME COMMAND...: stdout to NAME.out, stderr to NAME.err
  local name=$1
  shift
  JITFRAMES=perfmap "$@" "$programs/fib.mvm" 15 >"$tmp/$name.out" 2>"$tmp/$name.err" &
  local pid=$!
  pids+=("$pid")
  wait "$pid"
}

run denied "$deny" "$minivm"
status=$?
warning='^minivm: warning: jitframes disabled \(trampoline creation failed: JF_EACCES.*\); calling the interpreter directly$'
if [ "$status" = 0 ] && [ "$(cat "$tmp/denied.out")" = "fib 15 = 610" ] &&
   [ "$(wc -l <"$tmp/denied.err")" = 1 ] && grep -Eq "$warning" "$tmp/denied.err"; then
  echo "ok: exec memory denied: one warning, direct calls, same output"
else
  echo "FAIL: exec memory denied: status $status, stdout: $(cat "$tmp/denied.out"), stderr: $(cat "$tmp/denied.err")"
  fail=1
fi

run allowed "$minivm"
status=$?
if [ "$status" = 0 ] && [ "$(cat "$tmp/allowed.out")" = "fib 15 = 610" ] && [ ! -s "$tmp/allowed.err" ]; then
  echo "ok: control: exec memory allowed: no warning"
else
  echo "FAIL: control: status $status, stderr: $(cat "$tmp/allowed.err")"
  fail=1
fi
exit "$fail"
