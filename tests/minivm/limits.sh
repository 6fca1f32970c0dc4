#!/usr/bin/env bash
# minivm at its limits, on generated programs: many functions (each with a
# trampoline when JITFRAMES=perfmap), a long call chain, the variable limit, a
# print with many arguments, a huge identifier. Each must give the exact
# result or message, quickly, without a crash.
# Usage: limits.sh MINIVM [trampolines]   (the second word: also check 20000 trampolines)
set -u
minivm=$1 trampolines=${2:-}
tmp=$(mktemp -d)
pid=
trap 'rm -rf "$tmp"; [ -n "$pid" ] && rm -f "/tmp/perf-$pid.map"' EXIT
fail=0
unset JITFRAMES JITFRAMES_DIR

# expect NAME STATUS STDOUT STDERR-PREFIX -- command...
expect() {
  local name=$1 want_status=$2 want_out=$3 want_err=$4
  shift 5
  timeout 60 "$@" >"$tmp/out" 2>"$tmp/err"
  local status=$?
  local out err
  out=$(head -c 200 "$tmp/out") err=$(head -c 200 "$tmp/err")
  if [ "$status" != "$want_status" ] || [ "$out" != "$want_out" ] || [ "${err#"$want_err"}" = "$err" -a -n "$want_err" ] ||
     [ -z "$want_err" -a -n "$err" ]; then
    echo "FAIL: $name: status $status (want $want_status), stdout '$out', stderr '$err'"
    fail=1
  else
    echo "ok: $name"
  fi
}

# 20000 functions; f0 -> f1 -> ... -> f4999 is a 5001-deep chain (main included).
awk 'BEGIN {
  print "fn main() { print(f0(0)); }"
  for (i = 0; i < 20000; i++)
    printf "fn f%d(x) { return %s; }\n", i, (i < 4999 ? sprintf("f%d(x + 1)", i + 1) : "x + 1")
}' >"$tmp/many.mvm"
expect many_functions 0 5000 "" -- "$minivm" --no-jitframes "$tmp/many.mvm"
if [ "$trampolines" = trampolines ]; then
  (cd "$tmp" && JITFRAMES=perfmap exec "$minivm" many.mvm >out_tramp 2>err_tramp) &
  pid=$!
  wait "$pid"
  if [ "$(cat "$tmp/out_tramp")" = 5000 ] && [ ! -s "$tmp/err_tramp" ] &&
     [ "$(grep -c ' mvm:f[0-9]*$' "/tmp/perf-$pid.map")" = 20000 ]; then
    echo "ok: many_functions with 20000 trampolines"
  else
    echo "FAIL: many_functions with trampolines: $(cat "$tmp/out_tramp" "$tmp/err_tramp")"; fail=1
  fi
fi

awk 'BEGIN { print "fn main() {"; for (i = 0; i < 1024; i++) printf "var v%d = %d;\n", i, i; print "print(v1023);"; print "}" }' >"$tmp/vars.mvm"
expect vars_1024 0 1023 "" -- "$minivm" --no-jitframes "$tmp/vars.mvm"
awk 'BEGIN { print "fn main() {"; for (i = 0; i < 1025; i++) printf "var v%d = %d;\n", i, i; print "}" }' >"$tmp/vars2.mvm"
expect vars_1025 1 "" "vars2.mvm:1026:5: error: more than 1024 variables in one function" \
  -- sh -c "cd '$tmp' && exec '$minivm' --no-jitframes vars2.mvm"

awk 'BEGIN { printf "fn main() { print(1"; for (i = 1; i < 100000; i++) printf ", 1"; print "); }" }' >"$tmp/print.mvm"
"$minivm" --no-jitframes "$tmp/print.mvm" >"$tmp/print.out" 2>&1
if [ "$(wc -c <"$tmp/print.out")" = 200000 ]; then echo "ok: print_100000_args"; else echo "FAIL: print_100000_args"; fail=1; fi

awk 'BEGIN { printf "fn main() { "; for (i = 0; i < 100000; i++) printf "x"; print "(); }" }' >"$tmp/long.mvm"
expect long_name 1 "" "long.mvm:1:13: error: call to undefined function 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'" \
  -- sh -c "cd '$tmp' && exec '$minivm' --no-jitframes long.mvm"
exit "$fail"
