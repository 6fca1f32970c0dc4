#!/bin/bash
# `jitframes regions` and `jitframes perfmap` on a process whose table grew
# (140,000 regions: past the first table's 131,072 slots) into a new mapping:
# an anonymous one in huge pages, unnamed where the kernel cannot name it.
# Every region is listed, and the perf map written from memory names them.
# Usage: regions_from_a_grown_table.sh JITFRAMES JIT_CHURN
set -u
jitframes=$1 churn=$2
tmp=$(mktemp -d)
churn_pid=
cleanup() { [ -n "$churn_pid" ] && kill "$churn_pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
die() { echo "FAIL: $*" >&2; exit 1; }
BULK=140000

mkfifo "$tmp/stdin"
env -i "$churn" 8 0 "$tmp/truth.log" 20000 "$BULK" <"$tmp/stdin" >"$tmp/churn.out" &
churn_pid=$!
exec 3>"$tmp/stdin" # the program runs until this closes
for _ in $(seq 400); do grep -q '^pid' "$tmp/churn.out" && break; sleep 0.05; done
grep -q '^pid' "$tmp/churn.out" || die "jit_churn did not start"

listed=
for _ in $(seq 50); do
  "$jitframes" regions "$churn_pid" --json >"$tmp/regions.json" || die "regions failed"
  listed=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
bulk = sum(1 for r in d["live"] if r["name"].startswith("bulk_"))
print(bulk)' "$tmp/regions.json")  # the bulk regions never change: each is proven, consistent read or not
  [ "$listed" = "$BULK" ] && break
  sleep 0.1
done
[ "$listed" = "$BULK" ] || die "regions listed $listed of $BULK bulk regions"

map=$tmp/perf-$churn_pid.map
"$jitframes" perfmap "$churn_pid" -o "$map" || die "perfmap failed"
named=$(grep -c ' bulk_[0-9]*_r0$' "$map")
[ "$named" -ge "$BULK" ] || die "the perf map from memory names $named of $BULK bulk regions"
grep -q " bulk_$((BULK - 1))_r0\$" "$map" || die "bulk_$((BULK - 1))_r0 missing from the perf map"
# The first table is gone (where the kernel names anonymous mappings, one
# mapping has the table's name): what was read is the grown one.
[ "$(grep -c 'jitframes-regions' "/proc/$churn_pid/maps")" -le 1 ] || die "the first table outlived its growth"
echo "grown table: $listed bulk regions listed, $named in the perf map"
