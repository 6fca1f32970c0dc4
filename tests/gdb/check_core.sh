#!/usr/bin/env bash
# Post-mortem: a core written by gdb's gcore while the program stopped in a
# frameless JIT function shows, in a fresh gdb, the JIT frames by name (the
# symfiles are in the dumped memory) and the callers down to main.
# Usage: check_core.sh JITPROG
set -uo pipefail
prog=$1
command -v gdb >/dev/null || { echo "SKIP: gdb is not installed"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT

timeout -k 5 90 gdb -nx -batch -ex run -ex "gcore $dir/core" -ex kill --args "$prog" trap:jit_frameless \
  >"$dir/live.txt" 2>&1
[ -s "$dir/core" ] || { cat "$dir/live.txt"; fail "no core written"; }
out=$(timeout -k 5 90 gdb -nx -batch -ex bt "$prog" "$dir/core" 2>&1)
printf '%s\n' "$out" | grep '^#'
grep -qE '^#0 .* in jit_frameless \(\)' <<<"$out" || fail "frame 0 is not jit_frameless"
for fn in call_jit run_one run main; do
  grep -qE "^#[1-9] .* in $fn \(" <<<"$out" || fail "no $fn frame"
done
grep '^#' <<<"$out" | grep -q '??' && fail "?? in the backtrace"

# Negative control: without the gdb sink the same core has no JIT names.
rm -f "$dir/core"
JITPROG_NO_GDB=1 timeout -k 5 90 gdb -nx -batch -ex run -ex "gcore $dir/core" -ex kill \
  --args "$prog" trap:jit_frameless >"$dir/live.txt" 2>&1
out=$(timeout -k 5 90 gdb -nx -batch -ex bt "$prog" "$dir/core" 2>&1)
grep -E '^#' <<<"$out" | head -3
grep -E '^#[0-9]+ ' <<<"$out" | grep -q 'in jit_frameless' && fail "negative control: named without the sink"
grep -qE '^#0 +0x[0-9a-f]+ in \?\? \(\)' <<<"$out" || fail "negative control: frame 0 not anonymous"
echo PASS
