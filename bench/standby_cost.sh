#!/bin/bash
# The published table's cost per registration, as instructions (callgrind:
# a loaded machine cannot blur them) beside bench_standby's timings of the
# same build, in ascending and random address order: standby with the table
# against standby without it (JF_CONFIG_NO_TABLE). Counts only
# register_all, the loop of jf_register calls (names formatted before it).
# Usage: bench/standby_cost.sh BUILD_DIR [N]     (default N 100000)
set -eu
build=$1 n=${2:-100000}
bench=$build/bench/bench_standby
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v valgrind >/dev/null || { echo "valgrind is not installed"; exit 77; }

instructions() { # order variant -> instructions per registration
  valgrind --tool=callgrind --collect-atstart=no --toggle-collect=register_all \
    --callgrind-out-file="$tmp/out" "$bench" "$n" --order "$1" --only "$2" >/dev/null 2>&1
  awk -v n="$n" '/^(summary|totals):/ { printf "%.1f", $2 / n; exit }' "$tmp/out"
}

"$bench" "$n"
echo "instructions per registration (callgrind, register_all only):"
for order in up random; do
  with=$(instructions "$order" table)
  without=$(instructions "$order" no-table)
  ratio=$(awk -v a="$with" -v b="$without" 'BEGIN { printf "%.3f", a / b }')
  echo "  $order: table $with, no table $without: ratio $ratio (target <= 1.2)"
done
