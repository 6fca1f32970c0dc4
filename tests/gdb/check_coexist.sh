#!/usr/bin/env bash
# Two JIT libraries with their own descriptors in one process. Pinned:
# gdb 13 reads both descriptors and names both JIT frames; lldb 14 reads only
# the first descriptor it finds (libjitframes.so's): it names main_jit_fn and
# leaves other_jit_fn anonymous. Usage: check_coexist.sh COEXIST_PROGRAM
set -uo pipefail
prog=$1
fail() { echo "FAIL: $*"; exit 1; }
command -v gdb >/dev/null || { echo "SKIP: gdb is not installed"; exit 77; }
command -v lldb >/dev/null || { echo "SKIP: lldb is not installed"; exit 77; }

out=$(timeout -k 5 90 gdb -nx -batch -ex run -ex bt -ex kill "$prog" 2>&1)
printf '%s\n' "$out" | grep '^#'
grep -qE '^#0 .* in other_jit_fn \(\)' <<<"$out" || fail "gdb: frame 0 is not other_jit_fn"
grep -qE '^#1 .* in main_jit_fn \(\)' <<<"$out" || fail "gdb: frame 1 is not main_jit_fn"
grep -qE '^#2 .* in call_jit ' <<<"$out" || fail "gdb: frame 2 is not call_jit"
grep -qE '^#3 .* in main ' <<<"$out" || fail "gdb: frame 3 is not main"

out=$(timeout -k 5 90 lldb -b -o run -k bt -k 'process kill' -k quit -- "$prog" 2>&1)
printf '%s\n' "$out" | grep 'frame #'
grep -E 'frame #0:' <<<"$out" | grep -q other_jit_fn && fail "lldb now names other_jit_fn: update the pinned behaviour and the docs"
grep -qE 'frame #1: .*`main_jit_fn' <<<"$out" || fail "lldb: frame 1 is not main_jit_fn"
grep -qE 'frame #2: .*`call_jit' <<<"$out" || fail "lldb: frame 2 is not call_jit"
echo PASS
