#!/usr/bin/env bash
# lldb (`lldb -b -o run -k bt`) names the JIT frames through the GDB JIT
# interface (in symfiles merged and rebuilt while lldb watched), shows the
# source line of a region with a line table, and unwinds a frameless function
# with callee-saved registers to main.
# Usage: check_lldb.sh JITPROG
set -uo pipefail
prog=$1
command -v lldb >/dev/null || { echo "SKIP: lldb is not installed"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
bt_of() { # MODE -> lldb's backtrace at the first stop
  timeout -k 5 90 lldb -b -o run -k bt -k 'process kill' -k quit -- "$prog" "$1" 2>&1
}
expect_chain() { # OUTPUT FRAME0-PATTERN
  local out=$1 top=$2
  grep -qE "frame #0: .*\`$top" <<<"$out" || fail "frame 0 is not $top"
  for fn in call_jit run_one run main; do
    grep -qE "frame #[1-9]: .*\`$fn[( ]" <<<"$out" || fail "no $fn frame under $top"
  done
}

out=$(bt_of trap:jit_framed); printf '%s\n' "$out" | grep -E 'frame #|stop reason'
expect_chain "$out" 'jit_framed at jitprog\.mini:12'

out=$(bt_of trap:jit_frameless); printf '%s\n' "$out" | grep -E 'frame #|stop reason'
expect_chain "$out" 'jit_frameless'

# A region with two functions (four FDEs): the trap is in the framed second
# function, which the frameless first one called. lldb 14 unwinds a frame by
# the FDE at the start of the function (symbol) containing the pc; the
# symfile gives each function of the region its own symbol, so both frames
# unwind by their own rules: exactly jit_multi, jit_multi, then the C callers.
out=$(bt_of trap:jit_multi); printf '%s\n' "$out" | grep -E 'frame #|stop reason'
expect_chain "$out" 'jit_multi'
frames=$(grep -oE 'frame #[0-9]+: 0x[0-9a-f]+ [^`]*`[A-Za-z_]+' <<<"$out" | sed 's/.*`//' | uniq | head -6 | tr '\n' ' ')
[ "$frames" = "jit_multi call_jit run_one run main __libc_start_call_main " ] ||
  fail "multi-FDE region: frames are: $frames"
grep -qE 'frame #1: .*`jit_multi' <<<"$out" ||
  fail "multi-FDE region: no frame for its first part (unwound by the wrong FDE)"
echo PASS
