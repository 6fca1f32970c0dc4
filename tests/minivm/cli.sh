#!/usr/bin/env bash
# minivm's command line: usage errors (exit 2), unreadable files (exit 1),
# program arguments, and the documented fallback when jitframes cannot start.
# Usage: cli.sh MINIVM PROGRAMS_DIR
set -u
minivm=$1 programs=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# matches FILE REGEX: some line of FILE matches; the regex "EMPTY": FILE is empty.
matches() {
  if [ "$2" = EMPTY ]; then [ ! -s "$1" ]; else grep -Eq -- "$2" "$1"; fi
}

# expect NAME STATUS STDOUT-REGEX STDERR-REGEX -- command...
expect() {
  local name=$1 want_status=$2 out_re=$3 err_re=$4
  shift 5
  "$@" >"$tmp/out" 2>"$tmp/err"
  local status=$?
  if [ "$status" != "$want_status" ] || ! matches "$tmp/out" "$out_re" ||
     ! matches "$tmp/err" "$err_re"; then
    echo "FAIL: $name: status $status (want $want_status)"
    echo "  stdout: $(head -c 300 "$tmp/out")"
    echo "  stderr: $(head -c 300 "$tmp/err")"
    fail=1
  else
    echo "ok: $name"
  fi
}

unset JITFRAMES JITFRAMES_DIR
expect no_args 2 EMPTY '^minivm: no program file given' -- "$minivm"
expect bad_option 2 EMPTY "^minivm: bad option '--frobnicate'" -- "$minivm" --frobnicate x.mvm
expect bad_depth 2 EMPTY "^minivm: bad option '--max-depth'" -- "$minivm" --max-depth 0 x.mvm
expect help 0 '^usage: minivm' EMPTY -- "$minivm" --help
expect missing_file 1 EMPTY '^minivm: cannot open /nonexistent/x.mvm: No such file or directory$' \
  -- "$minivm" /nonexistent/x.mvm
expect directory 1 EMPTY '^minivm: cannot read /: Is a directory$' -- "$minivm" /
expect bad_program_arg 2 EMPTY "^minivm: program argument '12x' is not a 64-bit integer$" \
  -- "$minivm" "$programs/fib.mvm" 12x
expect huge_program_arg 2 EMPTY "is not a 64-bit integer" \
  -- "$minivm" "$programs/fib.mvm" 9223372036854775808
expect double_dash 0 '^fib 10 = 55$' EMPTY -- "$minivm" --no-jitframes -- "$programs/fib.mvm" 10

# The examples, with their documented outputs.
expect fib 0 '^fib 20 = 6765$' EMPTY -- "$minivm" --no-jitframes "$programs/fib.mvm" 20
expect calls 0 '^rounds: 10 checksum: 8421295$' EMPTY -- "$minivm" --no-jitframes "$programs/calls.mvm" 10
expect primes 0 '^primes below 1000 : 168$' EMPTY -- "$minivm" --no-jitframes "$programs/primes.mvm" 1000

# Fallback: jitframes cannot start (an unknown sink word): one warning line, same output.
JITFRAMES=nonsense expect fallback_bad_sink 0 '^fib 15 = 610$' \
  '^minivm: warning: jitframes disabled \(jf_init failed: .*\); calling the interpreter directly$' \
  -- "$minivm" "$programs/fib.mvm" 15
if [ "$(wc -l <"$tmp/err")" != 1 ]; then echo "FAIL: fallback warning is not one line"; fail=1; fi
# --no-jitframes does not even look at $JITFRAMES.
JITFRAMES=nonsense expect no_jitframes_ignores_env 0 '^fib 15 = 610$' EMPTY \
  -- "$minivm" --no-jitframes "$programs/fib.mvm" 15
# Output errors are reported (stdout is /dev/full).
"$minivm" --no-jitframes "$programs/fib.mvm" 10 >/dev/full 2>"$tmp/err"
status=$?
if [ "$status" != 1 ] || ! grep -q '^minivm: error writing output' "$tmp/err"; then
  echo "FAIL: write error: status $status, stderr: $(cat "$tmp/err")"; fail=1
else
  echo "ok: write_error"
fi
exit "$fail"
