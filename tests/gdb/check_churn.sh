#!/usr/bin/env bash
# gdb and lldb name every frame of a chain of JIT functions after 1,000
# registrations and 500 unregistrations and re-registrations of functions
# packed 16 bytes apart, and 10 more registered last (churn.c): the
# innermost 20 frames are exactly churn_1009, ..., churn_1000, churn_946,
# churn_845, ..., churn_37, then main.
# Usage: check_churn.sh CHURN_PROGRAM
set -uo pipefail
prog=$1
for tool in gdb lldb; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
done
want="$(for s in $(seq 1009 -1 1000); do printf 'churn_%d ' "$s"; done
       for k in $(seq 9 -1 0); do printf 'churn_%d ' $((37 + k * 101)); done)main "
fail=0
check() { # DEBUGGER FRAMES
  if [ "$2" = "$want" ]; then
    echo "ok: $1 names every frame: $2"
  else
    echo "FAIL: $1 frames are: $2"
    echo "      expected:       $want"
    fail=1
  fi
}
out=$(timeout -k 5 120 gdb -batch -nx -ex run -ex bt -ex kill "$prog" 2>&1)
frames=$(grep -E '^#[0-9]+ ' <<<"$out" | sed -E 's/^#[0-9]+ +(0x[0-9a-f]+ in )?([^ ]+) .*/\2/' |
         head -21 | tr '\n' ' ')
check gdb "$frames"
out=$(timeout -k 5 120 lldb -b -o run -k bt -k 'process kill' -k quit -- "$prog" 2>&1)
frames=$(awk '/^ *\* frame #0:/ { on = 1 } on' <<<"$out" | grep -E 'frame #[0-9]+: ' | head -21 |
         sed -E 's/.*frame #[0-9]+: 0x[0-9a-f]+( [^`]*`([A-Za-z_0-9]+))?.*/\2/; s/^$/??/' | tr '\n' ' ')
check lldb "$frames"
[ "$fail" = 0 ] && echo PASS
exit "$fail"
