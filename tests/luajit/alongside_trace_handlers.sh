#!/usr/bin/env bash
# Other trace handlers (jit.attach) in the same VM: with -jv or -jdump given
# before or after `-l jitframes`, both see every trace: the perf map names
# each of 300 functions' traces and so does the other handler's output.
# Usage: alongside_trace_handlers.sh MODULE_DIR
set -u
module_dir=$1
here=$(cd "$(dirname "$0")" && pwd)
command -v luajit >/dev/null || { echo "SKIP: luajit is not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; rm -f /tmp/perf-"$pid".map' EXIT
pid=none
export LUA_CPATH="$module_dir/?.so;;"
n=300
# The k<i> chunks a text names, counted once each.
named() { grep -oE "$1" "$2" | grep -oE 'k[0-9]+' | sort -u | wc -l; }
status=0
for case in "-l jitframes -jv=OUT" "-l jitframes -jdump=t,OUT" "-jv=OUT -l jitframes"; do
  out=$tmp/other.out
  rm -f "$out" "$tmp/count" "$tmp/pid"
  # shellcheck disable=SC2086 # the case's words are luajit's options
  JITFRAMES=perfmap timeout 300 "$here/../support/exec_with_fresh_map.sh" "$tmp/pid" \
    luajit ${case//OUT/$out} "$here/traces.lua" $n "$tmp/count" 2>"$tmp/err" ||
    { echo "FAIL: $case: luajit: $(cat "$tmp/err")"; status=1; continue; }
  pid=$(cat "$tmp/pid")
  registered=$(cat "$tmp/count")
  in_map=$(named "TRACE_[0-9]+::k[0-9]+:1$" "/tmp/perf-$pid.map")
  in_other=$(named "k[0-9]+:1" "$out")
  rm -f "/tmp/perf-$pid.map"
  if [ "$registered" -ge $n ] && [ "$in_map" -eq $n ] && [ "$in_other" -eq $n ] && ! [ -s "$tmp/err" ]; then
    echo "ok: luajit $case: $registered traces registered, the map names all $n functions, the other handler too"
  else
    echo "FAIL: luajit $case: $registered registered, $in_map of $n functions in the map, $in_other in the other handler's output; stderr: $(head -3 "$tmp/err")"
    status=1
  fi
done
[ $status = 0 ] && echo PASS
exit $status
