#!/bin/bash
# The published table's cost per registration and per unregistration, as
# instructions (callgrind: a loaded machine cannot blur them) beside
# bench_standby's timings (thread CPU time) of the same build, for every shape of region
# (name only, + file and line, + a 4-row line table, + own unwind rules,
# + shared unwind rules, trampolines created and destroyed) in ascending
# and random address order: standby with the table against standby without
# it (JF_CONFIG_NO_TABLE) in the same run. Counts only register_all and
# unregister_all, the loops of calls (names formatted before them).
# Usage: bench/standby_cost.sh BUILD_DIR [N]     (default N 100000)
set -eu
build=$1 n=${2:-100000}
bench=$build/bench/bench_standby
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v valgrind >/dev/null || { echo "valgrind is not installed"; exit 77; }

# order variant shape -> "register unregister" instructions per call
instructions() {
  valgrind --tool=callgrind --collect-atstart=no --toggle-collect=register_all --toggle-collect=unregister_all \
    --callgrind-out-file="$tmp/out" "$bench" "$n" --order "$1" --only "$2" --shape "$3" >/dev/null 2>&1
  callgrind_annotate --inclusive=yes "$tmp/out" 2>/dev/null | awk -v n="$n" '
    { gsub(",", "", $1) }
    /:register_all / && !r { r = $1 / n }
    /:unregister_all / && !u { u = $1 / n }
    END { printf "%.1f %.1f\n", r, u }'
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }

"$build/bench/bench_standby" "$n"
echo "instructions per call (callgrind, register_all and unregister_all only), table / no table (target <= 1.2):"
for shape in name file lines cfi cfi-shared trampoline; do
  for order in up random; do
    [ "$shape" = trampoline ] && [ "$order" = random ] && continue # the library places trampolines
    read -r reg_t unreg_t < <(instructions "$order" table "$shape")
    read -r reg_n unreg_n < <(instructions "$order" no-table "$shape")
    printf '  %-10s %-6s register %7.1f / %7.1f = %s   unregister %7.1f / %7.1f = %s\n' "$shape" "$order" \
      "$reg_t" "$reg_n" "$(ratio "$reg_t" "$reg_n")" "$unreg_t" "$unreg_n" "$(ratio "$unreg_t" "$unreg_n")"
  done
done
