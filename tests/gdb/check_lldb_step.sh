#!/usr/bin/env bash
# lldb single-steps (`thread step-inst`) every instruction of jitprog's JIT
# calls in "step" mode (framed, frameless by both exits, the multi-FDE
# region's two functions, a trampoline to the frameless one) and runs `bt` at
# each stop. At every stop in JIT code the frames must be JIT frames only,
# then call_jit, run_one, run, main: a frame unwound by the wrong rules shows
# up as an unnamed frame or a broken chain. Also asserts each JIT function
# was stepped through and that the multi-FDE region's second function was
# seen under its first.
# Usage: check_lldb_step.sh JITPROG [--wrong-cfi]
#   --wrong-cfi  negative control: jitprog registers a wrong CFA rule for the
#                frameless function's early exit; the check must fail there.
set -uo pipefail
prog=$1 variant=${2:-}
command -v lldb >/dev/null || { echo "SKIP: lldb is not installed"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# From the first call_jit on, no breakpoint: 800 steps cover the five calls
# and the small C code between them (checkpoint() is empty; about 200 steps
# in a plain build, 400 with ASan's instrumentation).
{
  echo "breakpoint set -n call_jit"
  echo run
  echo "breakpoint delete --force"
  for _ in $(seq 800); do echo "thread step-inst"; echo bt; done
} >"$work/commands"
[ "$variant" = --wrong-cfi ] && export JITPROG_WRONG_CFI=1
timeout -k 5 300 lldb -b -s "$work/commands" -k 'process kill' -- "$prog" step >"$work/out" 2>&1

# bt prints "  * frame #0: ADDR MODULE`NAME ..." then "    frame #N: ...".
awk '
  function name(line,   s) {
    if (line !~ /`/) return "?"
    s = substr(line, index(line, "`") + 1)
    sub(/[ (].*/, "", s)
    return s
  }
  function check_stop(   chain, i) {
    if (n == 0 || f[0] !~ /^(jit_|tramp_)/) return
    stops[f[0]]++
    total++
    chain = ""
    for (i = 0; i < n; i++) chain = chain " " f[i]
    if (chain !~ /^( (jit|tramp)_[a-z_]+)+ call_jit run_one run main( |$)/) {
      bad++
      if (bad <= 5) print "  wrong backtrace at " pc ":" chain
    }
    if (f[0] == "jit_multi" && f[1] == "jit_multi") second_part++
  }
  /^  \* frame #0: / { check_stop(); n = 0; pc = $4; f[n++] = name($0); in_bt = 1; next }
  in_bt && /^    frame #[0-9]+: / { f[n++] = name($0); next }
  { in_bt = 0 }
  END {
    check_stop()
    for (k in stops) printf "  %s: %d stops\n", k, stops[k]
    printf "  %d stops in JIT code, %d with a wrong backtrace, %d in jit_multi'"'"'s second function\n",
           total, bad, second_part
    exit !(bad == 0 && stops["jit_framed"] >= 4 && stops["jit_frameless"] >= 20 &&
           stops["jit_multi"] >= 8 && stops["tramp_frameless"] >= 4 && second_part >= 4)
  }' "$work/out"
rc=$?
if [ "$variant" = --wrong-cfi ]; then
  [ "$rc" != 0 ] && grep -q "frame #0: .*jit_frameless" "$work/out" &&
    { echo "PASS: negative control failed as expected"; exit 0; }
  echo "FAIL: negative control: the wrong CFI was not caught"
  exit 1
fi
[ "$rc" = 0 ] && { echo PASS; exit 0; }
grep -m1 -E "error|Process .* exited" "$work/out"
echo "FAIL: lldb single-step"
exit 1
