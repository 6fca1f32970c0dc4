#!/usr/bin/env bash
# lldb (`lldb -b -o run -k bt`) names the JIT frames through the GDB JIT
# interface (in symfiles merged and rebuilt while lldb watched), shows the
# source line of a region with a line table, unwinds a frameless function
# with callee-saved registers to main, and follows a region jf_move moved.
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
# jf_move: the moved copy of jit_frameless (the only one that traps) is
# named and unwound to main at its new address; at its old one lldb finds
# nothing any more (`image lookup` of the stop pc, the control, finds it).
out=$(timeout -k 5 90 lldb -b -o 'process launch --stop-at-entry' \
        -o 'process handle SIGUSR1 -s false -n false -p true' -o continue -k bt \
        -k 'image lookup -a $pc' -k 'image lookup -a `(unsigned long)jit_moved_from`' \
        -k 'process kill' -k quit -- "$prog" trap:moved 2>&1)
printf '%s\n' "$out" | grep -E 'frame #|stop reason|image lookup|Summary'
expect_chain "$out" 'jit_frameless'
grep -qE 'Summary: .*`jit_frameless \+ 8' <<<"$out" || fail "lldb does not find the moved copy at the stop pc"
old_lookup=$(sed -n '/image lookup -a `(unsigned long)jit_moved_from`/,$p' <<<"$out")
[ -n "$old_lookup" ] || fail "the old address was not looked up"
! grep -q 'Summary:' <<<"$old_lookup" || fail "lldb still names the old address: $old_lookup"
echo PASS
