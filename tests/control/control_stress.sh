#!/usr/bin/env bash
# 1,000 enable/disable cycles from outside (the tool, a process of its own
# each time) of the perf map, the jitdump and the gdb sink, while the target
# registers and unregisters regions from 4 threads besides its 100 stable
# ones (a few rounds per change of its sinks: what the files hold grows with
# the cycles, not with the time they take on a busy machine; both stay far
# below the checker's 1 GiB). No region is lost: every enable replays every live region, so the map
# and the dump each hold each stable region exactly once per enable (1,000
# times); both files pass `jitframes check`; gdb, attached at the end, names
# the stable regions; the target registered without one failure.
# Usage: control_stress.sh JITFRAMES_TOOL CONTROL_TARGET [CYCLES]
tool=$1
target=$2
cycles=${3:-1000}
. "$(dirname "$0")/lib.sh"

regions=100
mkdir -p "$dir/dumps"
start_target t env -u JITFRAMES JITFRAMES_CONTROL=1 JITFRAMES_DIR="$dir/dumps" \
  "$target" --regions $regions --threads 4 || finish
pid=$t_pid
map=/tmp/perf-$pid.map dump=$dir/dumps/jit-$pid.dump
for i in $(seq "$cycles"); do
  "$tool" enable "$pid" perfmap,jitdump,gdb >"$dir/last.out" 2>&1 || { fail "cycle $i enable: $(cat "$dir/last.out")"; break; }
  "$tool" disable "$pid" all >"$dir/last.out" 2>&1 || { fail "cycle $i disable: $(cat "$dir/last.out")"; break; }
done
echo "$cycles enable/disable cycles done"

# Each stable region, once per enable, in the map and in the dump.
for i in 0 37 $((regions - 1)); do
  n=$(grep -c " ctl_region_$i\$" "$map")
  [ "$n" -eq "$cycles" ] || fail "perf map: ctl_region_$i $n times, want $cycles"
  n=$("$tool" dump "$dump" | grep -c "name \"ctl_region_$i\"")
  [ "$n" -eq "$cycles" ] || fail "jitdump: ctl_region_$i loaded $n times, want $cycles"
done
# Bounded by counts: per cycle, the replay (the stable regions and the
# churn's live ones) and the churn's few rounds while enabled.
per_cycle=2000
lines=$(grep -c . "$map")
echo "perf map: $lines lines ($(stat -c %s "$map") bytes); jitdump: $(stat -c %s "$dump") bytes"
[ "$lines" -le $((cycles * per_cycle)) ] || fail "perf map: $lines lines, over $per_cycle per cycle"
loads=$("$tool" check --json "$dump" | sed -n 's/.*"loads": \([0-9]*\).*/\1/p')
[ -n "$loads" ] && [ "$loads" -le $((cycles * per_cycle)) ] || fail "jitdump: ${loads:-?} loads, over $per_cycle per cycle"
expect_rc check-map 0 "$tool" check "$map"
echo "$out"
expect_rc check-dump 0 "$tool" check "$dump"
echo "$out"

# gdb attached to the running target names the stable regions.
if command -v gdb >/dev/null; then
  expect_rc enable-gdb 0 "$tool" enable "$pid" gdb
  out=$(timeout -k 5 120 gdb -nx -batch -p "$pid" -ex 'info symbol (char *)code + 16 * 37' \
        -ex 'info symbol (char *)code + 16 * 99 + 3' -ex detach 2>&1)
  grep -q "^ctl_region_37 in section" <<<"$out" || fail "gdb does not name ctl_region_37: $out"
  grep -q "^ctl_region_99 + 3 in section" <<<"$out" || fail "gdb does not name ctl_region_99: $out"
  expect_rc disable-gdb 0 "$tool" disable "$pid" gdb
else
  fail "gdb is not installed"
fi
stop_target t # exit 0: no jitframes call in the target failed
rm -f "$map"
finish
