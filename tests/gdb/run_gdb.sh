#!/usr/bin/env bash
# Run one gdb Python check script against a test program, with a time cap.
# Usage: run_gdb.sh [--expect-fail PATTERN] SCRIPT PROGRAM [ARGS...]
# Passes when gdb exits 0 and the script printed its final PASS line; with
# --expect-fail (negative controls), when the script failed with a FAIL line
# matching PATTERN.
set -uo pipefail
expect_fail=""
if [ "$1" = "--expect-fail" ]; then expect_fail=$2; shift 2; fi
script=$1; shift
if ! command -v gdb >/dev/null; then
  echo "SKIP: gdb is not installed"; exit 77
fi
out=$(timeout -k 5 120 gdb -nx -batch -x "$script" --args "$@" 2>&1)
rc=$?
printf '%s\n' "$out"
if [ -n "$expect_fail" ]; then
  [ $rc -ne 0 ] || { echo "negative control: gdb script passed"; exit 1; }
  printf '%s\n' "$out" | grep -E "^FAIL: .*$expect_fail" || { echo "negative control: no matching FAIL"; exit 1; }
  exit 0
fi
if [ $rc -ne 0 ]; then echo "gdb exited with $rc"; exit 1; fi
printf '%s\n' "$out" | grep -q '^PASS' || { echo "no PASS line"; exit 1; }
printf '%s\n' "$out" | grep -q '^FAIL' && exit 1
exit 0
