#!/usr/bin/env bash
# Run one minivm test program and compare stdout, stderr and exit status with
# the expectations written in the program itself:
#   // args: 1 2       program arguments
#   // options: ...    minivm options before the file (e.g. --max-depth 50)
#   // out: TEXT       one expected stdout line (in order; "// out:" alone: an empty line)
#   // err: TEXT       one expected stderr line (in order)
#   // exit: N         expected exit status (default: 1 if any "// err:", else 0)
# The program runs from its own directory, so messages name it by its base name.
#
# Usage: run_program.sh MINIVM FILE MODE
#   MODE direct   --no-jitframes
#   MODE default  no option, $JITFRAMES unset (no sink: trampolines for the published table)
#   MODE perfmap  JITFRAMES=perfmap: every call goes through a trampoline
set -u
minivm=$1 file=$2 mode=$3
dir=$(cd "$(dirname "$file")" && pwd)
base=$(basename "$file")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

directive() { sed -n "s|^// $1:||p" "$file" | sed 's|^ ||'; }
directive out >"$tmp/want_out"
directive err >"$tmp/want_err"
args=$(directive args)
options=$(directive options)
want_status=$(directive exit)
if [ -z "$want_status" ]; then
  if [ -s "$tmp/want_err" ]; then want_status=1; else want_status=0; fi
fi

unset JITFRAMES JITFRAMES_DIR
case "$mode" in
  direct) flags=(--no-jitframes) ;;
  default) flags=() ;;
  perfmap) flags=(); export JITFRAMES=perfmap ;;
  *) echo "run_program.sh: unknown mode $mode" >&2; exit 2 ;;
esac

# shellcheck disable=SC2086 # options and args are word lists
(cd "$dir" && exec "$minivm" "${flags[@]}" $options "$base" $args) >"$tmp/out" 2>"$tmp/err" &
pid=$!
wait "$pid"
status=$?
rm -f "/tmp/perf-$pid.map" # the perf map sink's unavoidable fixed path

fail=0
if [ "$status" != "$want_status" ]; then
  echo "FAIL: exit status $status, expected $want_status"; fail=1
fi
if ! diff -u "$tmp/want_out" "$tmp/out" >"$tmp/diff_out"; then
  echo "FAIL: stdout differs (expected vs actual):"; cat "$tmp/diff_out"; fail=1
fi
if ! diff -u "$tmp/want_err" "$tmp/err" >"$tmp/diff_err"; then
  echo "FAIL: stderr differs (expected vs actual):"; cat "$tmp/diff_err"; fail=1
fi
[ "$fail" = 0 ] && echo "ok: $base ($mode)"
exit "$fail"
