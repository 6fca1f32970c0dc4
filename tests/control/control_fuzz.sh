#!/usr/bin/env bash
# Malformed and hostile requests (control_fuzz.c) against a process with
# the perf map on: it stays alive, every request is answered with an error
# or closed, its sinks and regions do not change, and it shuts down cleanly.
# Usage: control_fuzz.sh CONTROL_FUZZ CONTROL_TARGET [ATTEMPTS]
fuzz=$1
target=$2
attempts=${3:-2000}
. "$(dirname "$0")/lib.sh"
start_target t env JITFRAMES=perfmap JITFRAMES_CONTROL=1 "$target" --regions 30 || finish
"$fuzz" "$t_pid" "$attempts" 1 || fail "control_fuzz reported failures"
stop_target t
rm -f "/tmp/perf-$t_pid.map"
finish
