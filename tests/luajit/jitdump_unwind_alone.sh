#!/usr/bin/env bash
# luajit_jitdump_alone_carries_unwind_rules: with JITFRAMES=jitdump alone,
# the jitdump holds the traces' unwind rules (CODE_UNWINDING_INFO) as with
# jitdump,gdb: the module derives them for the jitdump too, not only when gdb
# or unwind is on (it once wrote 0 with jitdump alone). Only traces with room
# after their code in perf's mapping get them (docs/luajit.md says why), so
# the counts are compared, and must not be 0.
# Usage: jitdump_unwind_alone.sh MODULE_DIR JITFRAMES_TOOL HOT_LUA
set -uo pipefail
module_dir=$1 tool=$2 hot=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
unwind_count() { # SINKS: "<loads> <with unwind info>" of hot.lua's jitdump
  local d=$tmp/$1
  mkdir -p "$d"
  JITFRAMES=$1 JITFRAMES_DIR=$d LUA_CPATH="$module_dir/?.so;;" luajit -l jitframes "$hot" 10 >/dev/null ||
    fail "luajit with JITFRAMES=$1"
  "$tool" check "$d"/jit-*.dump | sed -n 's/.*(\([0-9]*\) loads, \([0-9]*\) with unwind info.*/\1 \2/p'
}
read -r loads_alone alone < <(unwind_count jitdump)
read -r loads_gdb with_gdb < <(unwind_count jitdump,gdb)
echo "JITFRAMES=jitdump: $alone of $loads_alone traces with unwind rules; jitdump,gdb: $with_gdb of $loads_gdb"
[ "${alone:-0}" -gt 0 ] || fail "no trace has unwind rules in the jitdump with JITFRAMES=jitdump alone"
[ "$alone" -eq "$with_gdb" ] || fail "jitdump alone: $alone traces with unwind rules, jitdump,gdb: $with_gdb"
echo PASS
