#!/usr/bin/env bash
# A real CPython 3.13 `-X perf_jit` dump (ELF machine 0 in its header, a
# header timestamp perf never uses): perf reads it, so `jitframes check`
# calls it valid with warnings (exit 3), not invalid; the same dump with its
# magic broken is invalid (exit 1).
# Usage: cpython_perf_jit.sh JITFRAMES_TOOL PYTHON3.13
set -u
tool=$1 python=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pid=$(cd "$tmp" && "$python" -X perf_jit -c '
import os
def f(): return 1
for i in range(10): f()
print(os.getpid())')
dump=/tmp/jit-$pid.dump
[ -s "$dump" ] || { echo "FAIL: CPython wrote no $dump"; exit 1; }
mv "$dump" "$tmp/jit-$pid.dump"
rm -f "/tmp/perf-$pid.map"
dump=$tmp/jit-$pid.dump
"$tool" check "$dump" >"$tmp/out" 2>"$tmp/err"
rc=$?
cat "$tmp/out" "$tmp/err"
[ "$rc" = 3 ] || { echo "FAIL: exit $rc, want 3 (valid, with warnings)"; exit 1; }
grep -q "valid jitdump" "$tmp/out" && grep -q "warning: unknown ELF machine 0" "$tmp/err" ||
  { echo "FAIL: no summary or no warning"; exit 1; }
printf 'XXXX' | dd of="$dump" bs=1 conv=notrunc status=none
"$tool" check "$dump" >/dev/null 2>&1
rc=$?
[ "$rc" = 1 ] || { echo "FAIL: a broken magic gave exit $rc, want 1"; exit 1; }
echo PASS
