#!/usr/bin/env bash
# Every live symfile must pass `readelf -a` without a warning and, when it
# has DWARF, `llvm-dwarfdump --verify`; the symbols and sections must be
# where docs/formats.md says; `jitframes check` (when built) accepts each one.
# Usage: check_symfiles.sh SYMFILE_DUMP [JITFRAMES_TOOL]
set -uo pipefail
dump=$1 tool=${2:-}
for t in readelf llvm-dwarfdump; do
  command -v $t >/dev/null || { echo "SKIP: $t is not installed"; exit 77; }
done
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

for mode in few many; do
  rm -f "$dir"/*.o
  timeout 60 "$dump" "$dir" $mode || fail "symfile_dump $mode"
  n=0; with_dwarf=0
  for f in "$dir"/*.o; do
    n=$((n + 1))
    out=$(readelf -a -W "$f" 2>&1) || fail "readelf -a $f"
    if grep -qiE 'warning|error' <<<"$out"; then
      printf '%s\n' "$out" | grep -iE 'warning|error' | head; fail "readelf complains about $f"
    fi
    grep -q 'REL (Relocatable file)' <<<"$out" || fail "$f is not ET_REL"
    # No SHF_ALLOC section at address 0.
    if readelf -S -W "$f" | awk '$2 ~ /^\./ && $0 ~ / [WAX]*A[WAX]* / && $4 ~ /^0+$/ {bad=1} END {exit !bad}'; then
      fail "$f has an allocated section at address 0"
    fi
    if [ -n "$tool" ]; then
      "$tool" check "$f" >/dev/null || { "$tool" check "$f"; fail "jitframes check $f"; }
    fi
    if grep -q '\.debug_info' <<<"$out"; then
      with_dwarf=$((with_dwarf + 1))
      v=$(llvm-dwarfdump --verify "$f" 2>&1) || { printf '%s\n' "$v"; fail "llvm-dwarfdump --verify $f"; }
    fi
  done
  # A region holding two functions (two FDEs that start in the entry state)
  # is named by two symbols and described by two subprograms.
  syms=$(for f in "$dir"/*.o; do readelf -s -W "$f"; done | grep -c ' two_functions$')
  [ "$syms" = 2 ] || fail "two_functions: $syms symbols, expected 2"
  subs=$(for f in "$dir"/*.o; do llvm-dwarfdump --debug-info "$f"; done | grep -c 'DW_AT_name.*"two_functions"')
  [ "$subs" = 2 ] || fail "two_functions: $subs subprograms, expected 2"
  echo "$mode: $n symfiles, $with_dwarf with DWARF: all clean"
  [ $n -ge 2 ] || fail "expected at least 2 symfiles"
  [ $with_dwarf -ge 1 ] || fail "expected a symfile with DWARF"
done

# Spot checks on the last run's contents: named FUNC symbols with sizes and
# the line table rows of the region that has one.
all=$(for f in "$dir"/*.o; do readelf -s -W "$f"; done)
grep -qE 'FUNC +GLOBAL +DEFAULT +[0-9]+ with_lines$' <<<"$all" || fail "no FUNC symbol with_lines"
grep -qE ' 48 FUNC +GLOBAL +DEFAULT +[0-9]+ plain$' <<<"$all" || fail "plain has no 48-byte size"
lines=$(for f in "$dir"/*.o; do llvm-dwarfdump --debug-line "$f"; done)
grep -q 'other.src' <<<"$lines" || fail "line table lacks other.src"
grep -q 'end_sequence' <<<"$lines" || fail "line table lacks end_sequence"
echo PASS
