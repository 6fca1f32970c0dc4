#!/usr/bin/env bash
# Run one gdb Python check script against a test program, with a time cap.
# Usage: run_gdb.sh SCRIPT PROGRAM [ARGS...]
# Passes when gdb exits 0 and the script printed its final PASS line.
set -uo pipefail
script=$1; shift
if ! command -v gdb >/dev/null; then
  echo "SKIP: gdb is not installed"; exit 77
fi
out=$(timeout -k 5 120 gdb -nx -batch -x "$script" --args "$@" 2>&1)
rc=$?
printf '%s\n' "$out"
if [ $rc -ne 0 ]; then echo "gdb exited with $rc"; exit 1; fi
printf '%s\n' "$out" | grep -q '^PASS' || { echo "no PASS line"; exit 1; }
printf '%s\n' "$out" | grep -q '^FAIL' && exit 1
exit 0
