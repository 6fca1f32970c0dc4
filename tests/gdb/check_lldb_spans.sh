#!/usr/bin/env bash
# lldb names a JIT function whichever code span of its symfile it sits in:
# functions in separate mappings registered as one batch (one symfile, 8
# spans), registered one by one (symfiles merged), and packed in one mapping.
# Each run traps in one function; frame #0 must be that function, by name,
# and lldb must unwind it to main (frame #1).
# Usage: check_lldb_spans.sh SPANS_PROGRAM
set -uo pipefail
prog=$1
command -v lldb >/dev/null || { echo "SKIP: lldb is not installed"; exit 77; }
fail=0
for mode in batch merged packed; do
  for n in 0 3 7; do
    out=$(timeout -k 5 90 lldb -b -o run -k bt -k 'process kill' -k quit -- "$prog" "$mode" "$n" 2>&1)
    frame0=$(grep -m1 -E 'frame #0: ' <<<"$out")
    frame1=$(grep -m1 -E 'frame #1: ' <<<"$out")
    if grep -qE "\`span_fn_$n( |$)" <<<"$frame0" && grep -qE '`main' <<<"$frame1"; then
      echo "ok: $mode $n: $frame0, unwound to main"
    else
      echo "FAIL: $mode $n: frame #0 is not span_fn_$n or frame #1 not main: ${frame0:-no backtrace} / $frame1"
      fail=1
    fi
  done
done
# A region with two functions inside a merged symfile: A calls B, B traps.
# lldb must show B and A, each named by the region, then main.
out=$(timeout -k 5 90 lldb -b -o run -k bt -k 'process kill' -k quit -- "$prog" multi 7 2>&1)
# The backtrace starts at "* frame #0" (the stop report before it shows frame #0 too).
chain=$(awk '/^ *\* frame #0:/ { on = 1 } on' <<<"$out" |
        grep -oE 'frame #[0-9]+: 0x[0-9a-f]+ [^`]*`[A-Za-z_0-9]+' | sed 's/.*`//' | head -3 | tr '\n' ' ')
if [ "$chain" = "span_fn_7 span_fn_7 main " ]; then
  echo "ok: multi-FDE region in a merged symfile: $chain"
else
  echo "FAIL: multi-FDE region in a merged symfile: frames are: $chain"
  fail=1
fi
[ "$fail" = 0 ] && echo PASS
exit "$fail"
