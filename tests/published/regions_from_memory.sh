#!/bin/bash
# `jitframes regions` and `jitframes perfmap` on a process started with no
# environment at all (standby, no channel) that keeps moving its code:
# the regions listed are the ground truth's, perf names the samples in JIT
# code from the perf map written from memory (each by its own slot), an
# existing output file is never overwritten, and a user who may not ptrace
# the process is refused by the kernel.
# Usage: regions_from_memory.sh JITFRAMES JIT_CHURN
set -u
jitframes=$1 churn=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../support/perf_test_env.sh"
require_perf

mkfifo "$tmp/stdin"
env -i "$churn" 8 0 "$tmp/truth.log" 5000000 <"$tmp/stdin" >"$tmp/churn.out" &
churn_pid=$!
exec 3>"$tmp/stdin" # the program runs until this closes
pids+=("$churn_pid")
for _ in $(seq 200); do grep -q '^pid' "$tmp/churn.out" && break; sleep 0.05; done
grep -q '^pid' "$tmp/churn.out" || die "jit_churn did not start"

# The code moves all the time (each call spins 5 million times, a few ms),
# one function at a time (unregistered, then registered again elsewhere):
# a read may meet the moment with 7 live regions, or overlap a change every
# time it tried and say so ("consistent": false; a whole read under ASan is
# slower than a change of the default churn). So each read below is asked
# again, a bounded number of times, until it shows the 8 (and, for the
# listing, a region already removed).
eight_live() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (d["consistent"] and len(d["live"]) == 8 and d["removed"]))' "$1"; }
for _ in $(seq 50); do
  "$jitframes" regions "$churn_pid" --json >"$tmp/regions.json" || die "regions failed"
  eight_live "$tmp/regions.json" && break
  sleep 0.1
done
for _ in $(seq 50); do
  "$jitframes" regions "$churn_pid" >"$tmp/regions.txt" || die "regions (text) failed"
  grep -q '^8 live regions' "$tmp/regions.txt" && break
  sleep 0.1
done
grep -q '^8 live regions' "$tmp/regions.txt" || die "text listing: $(head -1 "$tmp/regions.txt")"

# perf record while the code moves, then the perf map from memory.
$perf record -q -F 2000 -o "$tmp/perf.data" -p "$churn_pid" 2>"$tmp/perf.err" 3>&- &
perf_pid=$!
sleep 1.5
map=/tmp/perf-$churn_pid.map
# The churner writes nothing: a map there already is an earlier process's
# with the same pid (a littered /tmp), not this one's.
rm -f "$map"
"$jitframes" perfmap "$churn_pid" -o "$map" || die "perfmap failed"
"$jitframes" perfmap "$churn_pid" -o "$map" 2>"$tmp/again.err" && die "an existing output file was overwritten"
grep -q 'never overwritten' "$tmp/again.err" || die "no reason given: $(cat "$tmp/again.err")"

# A jitdump with the code bytes read from the target: valid, 8 loads, each
# the spin function's bytes under a name of the ground truth.
eight_loads() { "$jitframes" check "$tmp/mem.dump" | grep -q 'valid jitdump: .*(8 loads, 0 with unwind info, 8 with line info'; }
for _ in $(seq 20); do
  rm -f "$tmp/mem.dump"
  "$jitframes" perfmap "$churn_pid" --jitdump "$tmp/mem.dump" >/dev/null 2>"$tmp/dump.err" ||
    die "perfmap --jitdump failed: $(cat "$tmp/dump.err")"
  eight_loads && break
  sleep 0.1
done
eight_loads ||
  die "jitdump from memory: $("$jitframes" check "$tmp/mem.dump" 2>&1) ($(cat "$tmp/dump.err"))"

# Someone who may not ptrace it (nobody, against a root process) is refused.
if [ "$(id -u)" = 0 ]; then
  setpriv --reuid=65534 --regid=65534 --clear-groups "$jitframes" regions "$churn_pid" >/dev/null 2>"$tmp/nobody.err" &&
    die "nobody read root's table"
  grep -q 'ptrace\|Permission denied\|not permitted' "$tmp/nobody.err" || die "refusal unclear: $(cat "$tmp/nobody.err")"
fi
exec 3>&-
wait "$churn_pid" || die "jit_churn failed"
wait "$perf_pid"

python3 - "$tmp/regions.json" "$tmp/truth.log" "$map" "$tmp/mem.dump" <<'PY' || die "listing, map or jitdump disagrees with the ground truth"
import json, struct, sys
regions = json.load(open(sys.argv[1]))
truth, registered_at = {}, {}
for line in open(sys.argv[2]):
    f = line.split()
    if f[0] == "reg":
        truth.setdefault(int(f[1], 16), set()).add(f[3])
        registered_at[f[3]] = int(f[4])
live = regions["live"]
assert regions["consistent"] and len(live) == 8, regions
for r in live:
    assert r["name"] in truth.get(r["start"], ()), r
    # published_ns: a lower bound (coarse clock) of the time logged after jf_register returned
    assert 0 < r["published_ns"] <= registered_at[r["name"]], r
    assert r["file"] == "churn.jit" and r["line"] == int(r["name"].split("_g")[1].split("_")[0]), r
assert len(regions["removed"]) > 0
for r in regions["removed"]:
    assert r["name"] in truth.get(r["start"], ()) and r["removed_ns"] > 0, r
    assert 0 < r["published_gen"] < r["removed_gen"] and r["published_ns"] <= r["removed_ns"], r
for line in open(sys.argv[3]):
    start, size, name = line.split(maxsplit=2)
    assert name.strip() in truth.get(int(start, 16), ()), line
dump = open(sys.argv[4], "rb").read()
at, loads = 40, 0
spin = bytes.fromhex("554889e54889f84883e80175fa5dc3")
while at + 16 <= len(dump):
    rid, size, _ = struct.unpack_from("<IIQ", dump, at)
    if rid == 0:
        vma, addr, code_size = struct.unpack_from("<QQQ", dump, at + 24)
        end = dump.index(b"\0", at + 56)
        name = dump[at + 56:end].decode()
        # the code, then the writer's 8-byte nonce (no unwind data here)
        assert code_size == len(spin) + 8, code_size
        assert name in truth.get(addr, ()) and dump[end + 1:end + 1 + len(spin)] == spin, (name, addr)
        loads += 1
    at += size
assert loads == 8, loads
PY

$perf report -i "$tmp/perf.data" --stdio --sort sym -F overhead,sym 2>/dev/null >"$tmp/report.txt"
$perf script -i "$tmp/perf.data" -F ip,sym 2>/dev/null >"$tmp/script.txt"
python3 - "$tmp/script.txt" "$tmp/truth.log" <<'PY' || die "perf did not name the JIT samples from the map"
import sys
starts = {}
for line in open(sys.argv[2]):
    f = line.split()
    if f[0] == "reg":
        starts[int(f[1], 16)] = f[3].split("_f")[1]   # slot -> function index
jit = named = 0
for line in open(sys.argv[1]):
    f = line.split()
    if not f:
        continue
    ip = int(f[0], 16)
    slot = next((s for s in starts if s <= ip < s + 15), None)
    if slot is None:
        continue
    jit += 1
    sym = f[1] if len(f) > 1 else ""
    named += sym.startswith("churn_g") and sym.split("_f")[1] == starts[slot]
print(f"{named}/{jit} samples in JIT code named by their own slot")
assert jit >= 10 and named >= 0.95 * jit
PY
echo PASS
