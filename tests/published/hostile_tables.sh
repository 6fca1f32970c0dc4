#!/bin/bash
# The table readers against tables that share heap bytes among many slots
# and names that try to reach a terminal: each read stays within one
# budget (its peak memory and CPU time, measured by getrusage of the
# reader alone, follow the distinct bytes, not the slot count), a table
# over the budget is refused in one line, every output is valid for its
# format, and `regions --json` gives the kernel's pid beside the table's.
#   readers_decode_shared_heap_bytes_once: 1 and 4 entries sharing a 1 MiB
#     line table (old reader: 258 MiB and 1,026 MiB peak), 100,000 sharing an
#     8 KiB name (423 MiB), 400 sharing a 1 MiB unwind description (405 MiB),
#     3,000 sharing one that fails late (6.9 s of CPU): each under 64 MiB and
#     1 s of CPU here; the jitdump of 4 regions sharing the line table is
#     valid and holds it at most once (old: 800 MB, invalid).
#   readers_refuse_a_table_over_budget_in_one_line: 400 distinct 1 MiB unwind
#     images (a different region size each): refused, one line, the peak
#     under the 256 MiB budget plus 64 MiB.
#   regions_output_is_safe_text: names with ESC, OSC 52, 0x9B, U+202E,
#     invalid UTF-8, newlines: text without a control byte, JSON that
#     json.load reads, a perf map `jitframes check` accepts.
#   regions_json_gives_the_kernels_pid: a table claiming pid 1.
# Usage: hostile_tables.sh JITFRAMES TABLE_LIAR CASE (shared, refuse, text, pid)
set -u
jitframes=$1 liar=$2 case=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Under the sanitizers (JF_TEST_SANITIZED=1), shadow memory, redzones and
# CPU cost more: bounds x3 for memory, x4 for CPU; freed blocks are not
# kept in quarantine (it would count as the reader's own).
mem_x=1 cpu_x=1
if [ "${JF_TEST_SANITIZED:-0}" = 1 ]; then
  mem_x=3 cpu_x=4
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0"
fi
die() { echo "FAIL: $*" >&2; exit 1; }

# measure SHAPE COUNT ARGS...: run `jitframes ARGS` (PID replaced) on a liar
# of that shape; prints "rc maxrss_kib cpu_ms", output in $tmp/out (or $OUT),
# $tmp/err.
measure() {
  python3 - "$liar" "$jitframes" "$tmp" "$@" <<'PY'
import os, subprocess, sys
liar, jf, tmp, shape, count = sys.argv[1:6]
args = sys.argv[6:]
p = subprocess.Popen([liar, shape, count], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
words = p.stdout.readline().split()
if len(words) != 2:
    print("liar-failed 0 0"); sys.exit(0)
pid = words[1]
with open(os.environ.get("OUT", tmp + "/out"), "wb") as out, open(tmp + "/err", "wb") as err, open(tmp + "/pid", "w") as f:
    f.write(pid)
    r = subprocess.Popen([jf] + [a.replace("PID", pid) for a in args], stdout=out, stderr=err)
    _, status, ru = os.wait4(r.pid, 0)
p.stdin.close(); p.wait()
print(os.waitstatus_to_exitcode(status), ru.ru_maxrss, int((ru.ru_utime + ru.ru_stime) * 1000))
PY
}

check_bounded() { # SHAPE COUNT VERB...: succeeds within 64 MiB and 1 s of CPU
  read -r rc kib ms < <(measure "$@")
  echo "$1 $2 ${*:3}: rc $rc, peak $((kib / 1024)) MiB, $ms ms CPU"
  [ "$rc" = 0 ] || die "$1 $2: exit $rc: $(head -c 300 "$tmp/err")"
  [ "$kib" -le $((64 * 1024 * mem_x)) ] || die "$1 $2: peak $((kib / 1024)) MiB over $((64 * mem_x)) MiB"
  [ "$ms" -le $((1000 * cpu_x)) ] || die "$1 $2: $ms ms of CPU"
}
if [ "$case" = shared ]; then
check_bounded lines 1 regions PID
grep -q '^1 live regions' "$tmp/out" || die "lines 1: $(head -1 "$tmp/out")"
check_bounded lines 4 regions PID
# The jitdump of 4 regions sharing a 1 MiB line table: not 4 copies of it
# (the old writer: 800 MB, each DEBUG_INFO over what `check` holds).
check_bounded lines 4 perfmap PID --jitdump "$tmp/l.dump" -o "$tmp/l.map"
[ "$(stat -c %s "$tmp/l.dump")" -le $((4 << 20)) ] || die "lines 4: a $(stat -c %s "$tmp/l.dump")-byte jitdump"
"$jitframes" check "$tmp/l.dump" >"$tmp/check.out" 2>&1 || die "lines 4: check: $(cat "$tmp/check.out")"
rm -f "$tmp/l.dump" "$tmp/l.map"
OUT=/dev/null check_bounded names 100000 regions PID # 400 MB of listing
check_bounded cfi 400 regions PID --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); u=[r["unwind_bytes"] for r in d["live"]]; sys.exit(not (len(u) == 400 and min(u) > 1000000))' "$tmp/out" ||
  die "cfi 400: the 400 regions do not all have their unwind data"
check_bounded cfi-late 3000 regions PID
grep -q '^3000 live regions' "$tmp/out" || die "cfi-late: $(head -1 "$tmp/out")"
fi

if [ "$case" = refuse ]; then
read -r rc kib ms < <(measure cfi-sizes 400 regions PID)
echo "cfi-sizes 400: rc $rc, peak $((kib / 1024)) MiB, $ms ms CPU: $(cat "$tmp/err")"
[ "$rc" = 1 ] || die "cfi-sizes: not refused (exit $rc)"
[ "$(wc -l <"$tmp/err")" = 1 ] && grep -Eq 'refused.*(256 MiB budget|deadline)' "$tmp/err" || die "cfi-sizes: not one line: $(cat "$tmp/err")"
[ "$kib" -le $((320 * 1024 * mem_x)) ] || die "cfi-sizes: peak $((kib / 1024)) MiB"
fi

# Safe text. No byte below 0x20 but newline, no DEL, no C1 (raw or as
# UTF-8), no U+202E, all valid UTF-8; one line per region.
safe_text() {
  python3 - "$1" "$2" <<'PY' || die "$2: unsafe output"
import re, sys
b = open(sys.argv[1], "rb").read()
t = b.decode("utf-8")  # raises on invalid UTF-8
bad = re.search("[\x00-\x09\x0b-\x1f\x7f\x80-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]", t)
if bad:
    print(sys.argv[2], "has", repr(bad.group()), "at", bad.start()); sys.exit(1)
PY
}
if [ "$case" = text ]; then
read -r rc _ _ < <(measure hostile-names 0 regions PID)
[ "$rc" = 0 ] || die "hostile-names: regions exit $rc"
safe_text "$tmp/out" "regions text"
[ "$(wc -l <"$tmp/out")" = 10 ] || die "hostile-names: $(wc -l <"$tmp/out") lines, not 1 + 9"
fi
read -r rc _ _ < <(measure hostile-names 0 regions PID --json)
[ "$rc" = 0 ] || die "hostile-names: regions --json exit $rc"
if [ "$case" = pid ]; then
python3 - "$tmp/out" "$(cat "$tmp/pid")" <<'PY' || die "regions --json: $(head -c 300 "$tmp/out")"
import json, sys
d = json.loads(open(sys.argv[1], "rb").read().decode("utf-8", "replace"))
assert d["pid"] == int(sys.argv[2]) and d["table_pid"] == 1 and d["pid_mismatch"] is True, (d["pid"], d.get("table_pid"))
PY
echo PASS
exit 0
fi
safe_text "$tmp/out" "regions --json"
python3 - "$tmp/out" <<'PY' || die "regions --json: $(head -c 300 "$tmp/out")"
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
names = [r["name"] for r in d["live"]]
assert len(names) == 9, names
for n in names:
    assert n and not any(ord(c) < 0x20 or 0x7f <= ord(c) < 0xa0 or c == "\u202e" for c in n), n
assert any(n.startswith("osc52_?]52;") for n in names), names
PY
read -r rc _ _ < <(measure hostile-names 0 perfmap PID -o "$tmp/perf.map")
[ "$rc" = 0 ] || die "hostile-names: perfmap exit $rc"
safe_text "$tmp/perf.map" "perf map"
"$jitframes" check "$tmp/perf.map" >"$tmp/check.out" 2>&1 || die "check rejects the perf map: $(cat "$tmp/check.out")"
echo "PASS"
