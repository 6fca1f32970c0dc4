#!/usr/bin/env bash
# Runs two_states (two LuaJIT VMs in one process, each with the module):
# the process's one perf map holds traces named by both VMs' chunks, and is
# valid. Usage: two_states.sh PROGRAM MODULE_DIR JITFRAMES_TOOL
set -u
prog=$1 module_dir=$2 tool=$3
out=$(LUA_CPATH="$module_dir/?.so;;" "$prog") || { echo "FAIL: $out"; exit 1; }
echo "$out"
pid=${out##*pid=}
map=/tmp/perf-$pid.map
trap 'rm -f "$map"' EXIT
"$tool" check "$map" || { echo "FAIL: the map is not valid"; exit 1; }
for vm in vm_a vm_b; do
  grep -qE " TRACE_[0-9]+::$vm:[0-9]+$" "$map" || { echo "FAIL: no trace of $vm in the map"; exit 1; }
done
echo "ok: one map, traces of both VMs"
echo PASS
