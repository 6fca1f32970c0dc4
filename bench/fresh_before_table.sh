#!/bin/bash
# Registration in a fresh process before the published table existed and
# now, side by side (issue 31's "no slower than before the table"): builds
# the library of BEFORE (default 5e7ea3b, the last commit without the
# table) from this repository's history with the build type of BUILD_DIR,
# links bench_table_fresh.c against it, and alternates its rounds with
# BUILD_DIR's bench_table_fresh (table on, table off). Prints the medians of
# CPU per registration (page faults included), minor faults and peak RSS.
# --idle S sleeps S seconds before each process (bench_table_fresh --idle:
# back-to-back rounds reuse memory a VM has not yet handed back to its host).
# Usage: bench/fresh_before_table.sh BUILD_DIR [N] [ROUNDS] [--sink perfmap|jitdump] [--before REV]
#        [--idle S]    (default 1000000 regions, 5 rounds, standby, no idle)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
build=$(cd "$1" && pwd)
shift
n=1000000 rounds=5 sink=() before=5e7ea3b idle=0
positional=0
while [ $# -gt 0 ]; do
  case $1 in
    --sink) sink=(--sink "$2"); shift 2 ;;
    --before) before=$2; shift 2 ;;
    --idle) idle=$2; shift 2 ;;
    *) if [ $positional = 0 ]; then n=$1; else rounds=$1; fi; positional=$((positional + 1)); shift ;;
  esac
done
now=$build/bench/bench_table_fresh
[ -x "$now" ] || { echo "no $now: build the bench_table_fresh target first"; exit 1; }
git -C "$repo" cat-file -e "$before^{commit}" 2>/dev/null || {
  echo "commit $before is not in $repo's history (a release tarball has none): nothing to compare with"
  exit 77
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")
mkdir "$tmp/src"
git -C "$repo" archive "$before" | tar -x -C "$tmp/src"
cmake -S "$tmp/src" -B "$tmp/build" -DCMAKE_BUILD_TYPE="${type:-RelWithDebInfo}" -DJITFRAMES_BUILD_TESTS=OFF \
  -DJITFRAMES_BUILD_TOOLS=OFF -DJITFRAMES_BUILD_EXAMPLES=OFF -DJITFRAMES_BUILD_BENCH=OFF \
  -DJITFRAMES_BUILD_PYTHON=OFF -DJITFRAMES_BUILD_LUAJIT=OFF >"$tmp/cmake.log" 2>&1 ||
  { cat "$tmp/cmake.log"; exit 1; }
cmake --build "$tmp/build" --target jitframes_static -j2 >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; exit 1; }
# The same program, -O2 -g as RelWithDebInfo builds it; the old header has no
# JF_CONFIG_NO_TABLE (both of its variants are "before").
cc -O2 -g -std=c11 -DJF_CONFIG_NO_TABLE=0 -I"$tmp/src/include" -I"$here" "$here/bench_table_fresh.c" \
  "$(find "$tmp/build" -name 'libjitframes*.a' | head -1)" -lpthread -o "$tmp/before"

for _ in $(seq "$rounds"); do
  sleep "$idle"
  "$tmp/before" "$n" "${sink[@]}" --rounds 1 >"$tmp/out" && grep -E '^  table +[0-9]' "$tmp/out" >>"$tmp/before.txt"
  "$now" "$n" "${sink[@]}" --rounds 1 --idle "$idle" >"$tmp/out"
  grep -E '^  table +[0-9]' "$tmp/out" >>"$tmp/table.txt"
  grep -E '^  no table +[0-9]' "$tmp/out" >>"$tmp/notable.txt"
done

# One field of every line of a file, found by the word beside it: ns (CPU per
# registration), minor (faults per registration), RSS (MiB), one per line.
column() {
  awk -v key="$2" '{ for (i = 1; i <= NF; i++) {
      if (key == "RSS" && $i == "RSS") print $(i + 1)
      if (key != "RSS" && $i == key) print $(i - 1) } }' "$1"
}
median() { sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# file -> "cpu faults rss" medians
medians() { echo "$(column "$1" ns | median) $(column "$1" minor | median) $(column "$1" RSS | median)"; }
read -r b_cpu b_flt b_rss < <(medians "$tmp/before.txt")
read -r t_cpu t_flt t_rss < <(medians "$tmp/table.txt")
read -r o_cpu o_flt o_rss < <(medians "$tmp/notable.txt")
printf '%s registrations in a fresh process (%s), median of %s alternating rounds, %s s idle before each:\n' \
  "$n" "${sink[1]:-standby}" "$rounds" "$idle"
row() { awk -v l="$1" -v c="$2" -v f="$3" -v m="$4" -v n="$n" 'BEGIN { printf "  %-26s %7.1f ns CPU per registration, %8.0f minor faults, peak RSS %6.1f MiB\n", l, c, f * n, m }'; }
row "before the table ($before)" "$b_cpu" "$b_flt" "$b_rss"
row "now, table on" "$t_cpu" "$t_flt" "$t_rss"
row "now, table off" "$o_cpu" "$o_flt" "$o_rss"
awk -v t="$t_cpu" -v b="$b_cpu" -v o="$o_cpu" -v tr="$t_rss" -v br="$b_rss" -v n="$n" 'BEGIN {
  printf "  table on / before: CPU %.3f (target <= 1), peak RSS +%.0f bytes per region; table off / before: CPU %.3f\n",
    t / b, (tr - br) * 1048576 / n, o / b }'
echo "  every round (ns): before $(column "$tmp/before.txt" ns | xargs); table on $(column "$tmp/table.txt" ns |
  xargs); table off $(column "$tmp/notable.txt" ns | xargs)"
