#!/usr/bin/env bash
# perf record -g of perf_program with the perf map sink: every sample in spin
# must have a trampoline name right above it and that trampoline's own caller
# above that (tramp_alpha under caller_alpha...), for each of the three.
# Negative control: the same program without the sink must fail the check.
# Usage: perf_names.sh PROGRAM
set -u
prog=$(readlink -f "$1")
include=$(cd "$(dirname "$0")/../support" && pwd)
fresh_map=$include/exec_with_fresh_map.sh
perf_read=$include/perf_ignoring_sigpipe.sh # may run addr2line: see there
command -v perf >/dev/null || { echo "perf is not installed"; exit 77; }
work=$(mktemp -d)
cleanup() {
  for f in "$work"/*/pid; do [ -s "$f" ] && rm -f "/tmp/perf-$(cat "$f").map"; done
  rm -rf "$work"
}
trap cleanup EXIT
export HOME=$work/home
mkdir -p "$HOME"

# Prints "name caller count" per trampoline found above spin, and the
# number of spin samples; exits non-zero if names or callers are wrong.
check() { # dir
  "$perf_read" script -i "$1/perf.data" -F ip,sym 2>"$1/script.err" >"$1/script.txt" || return 2
  awk '
    function flush() {
      if (n >= 3 && frame[0] == "spin") {
        spin++
        t = frame[1]; c = frame[2]
        if (t ~ /^tramp_/ && c == "caller_" substr(t, 7)) good[t]++
        else bad++
      }
      n = 0
    }
    NF == 0 { flush(); next }
    { frame[n++] = $2 }
    END {
      flush()
      for (t in good) printf "%s %d\n", t, good[t]
      printf "spin samples %d, wrong or unnamed %d\n", spin, bad
      ok = spin >= 30 && bad * 100 <= spin * 2
      for (k = 0; k < 3; k++) ok = ok && good["tramp_" (k == 0 ? "alpha" : k == 1 ? "beta" : "gamma")] >= 5
      exit ok ? 0 : 1
    }' "$1/script.txt"
}

record() { # dir args...
  local dir=$1; shift
  mkdir -p "$dir"
  (cd "$dir" && perf record -q -e cpu-clock -g -o "$dir/perf.data" -- \
     "$fresh_map" pid "$prog" "$@" >"$dir/out" 2>"$dir/err") \
    || { cat "$dir/err"; return 1; }
}

record "$work/named" || { echo "perf record failed"; exit 1; }
check "$work/named"; rc=$?
"$perf_read" report -i "$work/named/perf.data" --stdio --no-children -g caller 2>/dev/null | grep -m3 -E 'tramp_(alpha|beta|gamma)'
[ $rc -eq 0 ] || { echo "FAIL: trampolines not named with their callers"; head -60 "$work/named/script.txt"; exit 1; }

record "$work/control" --no-jitframes || { echo "perf record (control) failed"; exit 1; }
if check "$work/control" >/dev/null; then
  echo "FAIL: negative control passed without the perf map"; exit 1
fi
echo "negative control: without the perf map the trampolines are not named"
exit 0
