#!/usr/bin/env bash
# The LuaJIT module's files under stress:
#  - SIGKILL: a luajit that made 300 functions' traces is killed; its perf
#    map and its jitdump are valid and hold every trace registered before;
#  - flush: A's trace runs, jit.flush() frees it, B's trace is compiled at
#    the same machine code address (LuaJIT maps its new mcode area where the
#    old one was: reuse_mcode.c makes the kernel's chance a certainty);
#    through the jitdump (timestamped records) perf attributes each sample
#    to the right one.
# Usage: sigkill_flush.sh MODULE_DIR JITFRAMES_TOOL REUSE_MCODE_SHIM
set -u
module_dir=$1 tool=$2 reuse_shim=$3
here=$(cd "$(dirname "$0")" && pwd)
command -v luajit >/dev/null || { echo "SKIP: luajit is not installed"; exit 77; }
. "$here/../support/perf_test_env.sh"
export LUA_CPATH="$module_dir/?.so;;"

# SIGKILL
(cd "$tmp" && JITFRAMES=perfmap,jitdump JITFRAMES_DIR=$tmp \
   "$here/../support/exec_with_fresh_map.sh" kill.pid luajit -l jitframes "$here/kill.lua" 300 "$tmp/count")
pid=$(cat "$tmp/kill.pid")
pids+=("$pid")
stopped=$(cat "$tmp/count")
[ "$stopped" -ge 300 ] || die "only $stopped traces registered before the kill"
"$tool" check "/tmp/perf-$pid.map" >"$tmp/c1" 2>&1 || die "map: $(cat "$tmp/c1")"
"$tool" check "$tmp/jit-$pid.dump" >"$tmp/c2" 2>&1 || die "dump: $(cat "$tmp/c2")"
# Every registration is a line and a CODE_LOAD (LuaJIT reuses the numbers of
# collected traces, so names repeat): count them all.
in_map=$(grep -cE ' TRACE_[0-9]+::' "/tmp/perf-$pid.map")
in_dump=$("$tool" dump "$tmp/jit-$pid.dump" | grep -cE 'name "TRACE_[0-9]+::')
[ "$(grep -cE ' TRACE_[0-9]+::k[0-9]+:1$' "/tmp/perf-$pid.map")" -ge 300 ] || die "fewer than 300 k<i> traces"
[ "$in_map" -ge "$stopped" ] && [ "$in_dump" -ge "$stopped" ] ||
  die "after SIGKILL: $stopped traces were registered, the map holds $in_map, the dump $in_dump"
echo "ok: SIGKILL after $stopped traces: map $in_map, dump $in_dump, both valid"

# flush
require_perf
mkdir "$tmp/flush"
(cd "$tmp/flush" && JITFRAMES=perfmap,jitdump JITFRAMES_DIR=$tmp/flush timeout 300 perf record -q -k 1 -e cpu-clock \
   -o perf.data -- env LD_PRELOAD="$reuse_shim" "$here/../support/exec_with_fresh_map.sh" pid \
   luajit -l jitframes "$here/flush.lua" 15 >out 2>err) || die "perf record: $(cat "$tmp/flush/err")"
pids+=("$(cat "$tmp/flush/pid")")
"$tool" check "$tmp/flush"/jit-*.dump >/dev/null || die "flush dump invalid"
# The two loops' traces start on lines 3 (A) and 4 (B), at one address.
"$tool" --json dump "$tmp/flush"/jit-*.dump | python3 -c '
import json, sys
loads = [r for r in json.load(sys.stdin)["records"] if r["type"] == "CODE_LOAD"]
def ranges(line):
    return [(r["code_addr"], r["code_addr"] + r["code_size"]) for r in loads if r["name"].endswith(line)]
a, b = ranges("flush.lua:3"), ranges("flush.lua:4")
if not a or not b:
    sys.exit("FAIL: no trace for A or for B in the dump")
shared = [(max(x[0], y[0]), min(x[1], y[1])) for x in a for y in b if x[0] < y[1] and y[0] < x[1]]
if not shared:
    sys.exit("FAIL: the traces of A %s and B %s share no address" % (a, b))
print("ok: after jit.flush() traces of B occupy addresses of traces of A: %d bytes in common from %s"
      % (sum(e - s for s, e in shared), hex(shared[0][0])))' || exit 1
perf inject --jit -i "$tmp/flush/perf.data" -o "$tmp/flush/perf.jit.data" 2>/dev/null || die "perf inject"
"$perf" script -i "$tmp/flush/perf.jit.data" -F time,ip,sym 2>/dev/null |
  python3 -c '
import re, sys
rows = [(float(m.group(1)), m.group(2)) for m in (re.search(r"([0-9.]+):\s+[0-9a-f]+\s+(\S+)", l) for l in sys.stdin) if m]
a = [t for t, s in rows if re.match(r"TRACE_\d+::.*flush\.lua:3$", s)]
b = [t for t, s in rows if re.match(r"TRACE_\d+::.*flush\.lua:4$", s)]
print("A samples %d, B samples %d" % (len(a), len(b)))
if len(a) < 100 or len(b) < 100:
    sys.exit("FAIL: too few named samples")
if max(a) > min(b):
    sys.exit("FAIL: a sample named A comes after one named B: wrong attribution")
' || exit 1
echo "ok: through the jitdump every sample before the flush is A's, every one after is B's"
echo PASS
