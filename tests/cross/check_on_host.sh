#!/usr/bin/env bash
# Files written on a foreign architecture (under qemu) pass this machine's
# `jitframes check`, as perf and gdb read them anywhere: the GDB symfiles of
# symfile_dump (single and merged), and minivm's jitdump (trampolines with
# their unwinding info) and perf map. On s390x every one is big-endian.
# Usage: check_on_host.sh HOST_TOOL UNDER_QEMU SYMFILE_DUMP MINIVM PROGRAM ORDER
# ORDER: little-endian or big-endian, the jitdump header's byte order.
set -uo pipefail
tool=$1 qemu=$2 dump=$3 minivm=$4 program=$5 order=$6
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
check() { # FILE: must pass, and its report must be shown
  "$tool" check "$1" || fail "jitframes check $1"
}

for mode in few many; do
  mkdir "$dir/$mode"
  "$qemu" "$dump" "$dir/$mode" $mode || fail "symfile_dump $mode"
  n=0
  for f in "$dir/$mode"/*.o; do
    [ -e "$f" ] || continue
    n=$((n + 1))
    "$tool" check "$f" >/dev/null || { "$tool" check "$f"; fail "jitframes check $f"; }
  done
  [ "$n" -gt 0 ] || fail "symfile_dump $mode wrote no symfile"
  echo "ok: $n symfiles ($mode) pass jitframes check"
done

mkdir "$dir/jit"
JITFRAMES=jitdump,perfmap JITFRAMES_DIR=$dir/jit "$qemu" "$minivm" "$program" 3 >/dev/null ||
  fail "minivm $program"
dumps=("$dir"/jit/jit-*.dump)
[ -e "${dumps[0]}" ] || fail "minivm wrote no jitdump in $dir/jit"
pid=${dumps[0]##*/jit-}
pid=${pid%.dump}
map=/tmp/perf-$pid.map
trap 'rm -rf "$dir" "$map"' EXIT
check "${dumps[0]}"
"$tool" dump "${dumps[0]}" >"$dir/dump.txt" || fail "jitframes dump ${dumps[0]}"
grep -q "^header: $order," "$dir/dump.txt" || { head -2 "$dir/dump.txt"; fail "the dump is not $order"; }
grep -q 'mvm:' "$dir/dump.txt" || fail "no mvm: function in the dump"
grep -q 'CODE_UNWINDING_INFO' "$dir/dump.txt" || fail "no unwinding info in the dump"
check "$map"
grep -q ' mvm:' "$map" || fail "no mvm: name in $map"
echo "PASS: files written under qemu pass jitframes check here"
