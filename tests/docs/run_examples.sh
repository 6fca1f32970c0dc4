#!/usr/bin/env bash
# The code the documentation shows, compiled and run as a reader would:
# README.md's "Using the library" block and docs/examples/*.c (the guide's),
# each against the installed-style library (static archive + header), with
# the perf map and jitdump sinks on; every file they write must pass
# `jitframes check` and name what the example registered.
# Usage: run_examples.sh SOURCE_DIR C_COMPILER LIBJITFRAMES_A JITFRAMES_TOOL
set -uo pipefail
src=$1 cc=$2 lib=$3 tool=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# README.md: the first ```c block after "## Using the library".
awk '/^## Using the library/ { on = 1 } on && /^```c/ { grab = 1; next } grab && /^```/ { exit } grab' \
  "$src/README.md" >"$tmp/readme_example.c"
[ -s "$tmp/readme_example.c" ] || bad "no C block under README.md's 'Using the library'"

check_run() { # NAME EXPECTED_NAME: run the built example, check its files
  local name=$1 expect=$2 dir=$tmp/run-$1
  mkdir "$dir"
  (cd "$dir" && JITFRAMES=perfmap,jitdump JITFRAMES_DIR=$dir \
     "$src/tests/support/exec_with_fresh_map.sh" pid "$tmp/$name" >out 2>err)
  local rc=$? pid
  pid=$(cat "$dir/pid")
  local map=/tmp/perf-$pid.map
  [ "$rc" = 0 ] || bad "$name exited $rc: $(cat "$dir/err")"
  for f in "$map" "$dir/jit-$pid.dump"; do
    [ -e "$f" ] || { bad "$name wrote no $f"; continue; }
    "$tool" check "$f" >"$dir/check" 2>&1 || bad "$name: jitframes check $f: $(cat "$dir/check")"
  done
  grep -q " $expect\$" "$map" 2>/dev/null || bad "$name: its map does not name $expect"
  "$tool" dump "$dir/jit-$pid.dump" 2>/dev/null | grep -q "name \"$expect\"" ||
    bad "$name: its dump does not name $expect"
  rm -f "$map"
  [ "$fail" = 0 ] && echo "ok: $name: $(head -1 "$dir/out")"
}

for example in readme_example:"$tmp/readme_example.c":js:compute_total \
               jit_region:"$src/docs/examples/jit_region.c":js:computeTotal \
               interpreter:"$src/docs/examples/interpreter.c":script:fib; do
  name=${example%%:*} rest=${example#*:}
  file=${rest%%:*} expect=${rest#*:}
  "$cc" -std=c11 -Wall -Wextra -Werror -I"$src/include" -o "$tmp/$name" "$file" "$lib" -pthread \
    2>"$tmp/$name.cc" || { bad "$name does not compile: $(cat "$tmp/$name.cc")"; continue; }
  check_run "$name" "$expect"
done
# The guide's recipe: a symfile dumped from gdb through the descriptor.
if command -v gdb >/dev/null; then
  first='__jit_debug_descriptor.first_entry'
  JITFRAMES=gdb timeout 120 gdb -batch -nx -ex 'break eval' -ex run \
    -ex "dump binary memory $tmp/sym.o $first->symfile_addr $first->symfile_addr + $first->symfile_size" \
    --args "$tmp/interpreter" >"$tmp/gdb.out" 2>&1
  if "$tool" check "$tmp/sym.o" >"$tmp/sym.check" 2>&1; then
    echo "ok: the guide's gdb recipe dumps a valid symfile: $(cat "$tmp/sym.check")"
  else
    bad "guide's gdb recipe: $(cat "$tmp/sym.check") $(tail -3 "$tmp/gdb.out")"
  fi
fi
[ "$fail" = 0 ] && echo PASS
exit "$fail"
