#!/bin/sh
# Real perf: samples in registered JIT code get the registered name, with the
# C caller below it; the same program with the sink off shows no name.
# Usage: perf_names.sh JIT_SPIN_PROGRAM
set -eu
prog=$1
name=jf_jit_spin_probe
include=$(cd "$(dirname "$0")/../support" && pwd)
fresh_map=$include/exec_with_fresh_map.sh
perf_read=$include/perf_ignoring_sigpipe.sh # may run addr2line: see there
command -v perf >/dev/null 2>&1 || { echo "SKIP: perf is not installed"; exit 77; }

work=$(mktemp -d /tmp/jf-perf-names.XXXXXX)
pids=""
cleanup() {
  [ -n "${KEEP:-}" ] && { echo "kept $work"; return; }
  for p in $pids; do rm -f "/tmp/perf-$p.map"; done
  rm -rf "$work"
}
trap cleanup EXIT INT TERM
export HOME="$work/home" # perf's ~/.debug cache stays private
mkdir -p "$HOME"
fail() { echo "FAIL: $*"; exit 1; }

# record DIR [env assignments...]: run the program under perf in a fresh dir.
record() {
  dir="$work/$1"; shift
  mkdir "$dir"
  env "$@" perf record -q -e cpu-clock -g -o "$dir/perf.data" -- \
    "$fresh_map" - "$prog" 1 "$name" \
    >"$dir/out" 2>"$dir/err" || { cat "$dir/err"; fail "perf record failed in $dir"; }
  pid=$(sed -n 's/^pid //p' "$dir/out")
  [ -n "$pid" ] || fail "no pid printed in $dir"
  pids="$pids $pid"
  "$perf_read" report -i "$dir/perf.data" --stdio --no-children --sort sym >"$dir/report" 2>"$dir/report.err"
  "$perf_read" script -i "$dir/perf.data" -F ip,sym,dso >"$dir/script" 2>"$dir/script.err"
}

# Samples whose first frame matches $2 and whose next frame is the C caller.
samples_with_caller() {
  awk -v leaf="$2" '
    /^[[:space:]]*$/ { first = ""; depth = 0; next }
    { depth++ }
    depth == 1 { first = $0; next }
    depth == 2 && first ~ leaf && $0 ~ /call_jit_code/ { n++ }
    END { print n + 0 }' "$1"
}

record on JITFRAMES=perfmap
record off -u JITFRAMES

on="$work/on"; off="$work/off"
on_pid=$(sed -n 's/^pid //p' "$on/out")
grep -q " $name\$" "/tmp/perf-$on_pid.map" || fail "the map of the run with the sink on lacks $name"
grep -q "$name" "$on/report" || { cat "$on/report"; fail "perf report does not show $name"; }
named=$(samples_with_caller "$on/script" "$name")
[ "$named" -ge 20 ] || { head -60 "$on/script"; fail "only $named samples in $name with call_jit_code below"; }

# Negative control: no map, no name — but the samples were in the anonymous
# code all the same, with the same caller, so the name was the only change.
[ ! -e "/tmp/perf-$(sed -n 's/^pid //p' "$off/out").map" ] || fail "a map was written with the sink off"
if grep -q "$name" "$off/report" "$off/script"; then fail "the name shows with the sink off"; fi
unnamed=$(samples_with_caller "$off/script" '//anon|unknown')
[ "$unnamed" -ge 20 ] || { head -60 "$off/script"; fail "control: only $unnamed anonymous samples under call_jit_code"; }

echo "PASS: $named named samples with call_jit_code below; control: $unnamed unnamed"
