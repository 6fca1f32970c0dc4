#!/bin/bash
# The eBPF proof: tools/ebpf/jitframes_sample.py samples a process started
# with no environment at all (jit_churn: code unregistered and registered
# again elsewhere under new names all the time): the BPF program records
# each sample's pc with the table's generation, read in the kernel at
# sample time, and the sampler names it afterwards by the region live at
# that generation, from the table read out of the process's memory. Against jit_churn's ground truth (which
# region was live at each address at each moment, CLOCK_MONOTONIC), at least
# 95% of the samples whose pc lies in registered code carry the right name,
# over at least 200 such samples (count-based; the sampler stops at 1500).
# Exits 77 only when the kernel refuses BPF (the sampler says why).
# Usage: ebpf_names_samples.sh JIT_CHURN SAMPLER
set -u
churn=$1 sampler=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
die() { echo "FAIL: $*"; exit 1; }

mkfifo "$tmp/stdin"
env -i "$churn" 8 0 "$tmp/truth.log" <"$tmp/stdin" >"$tmp/churn.out" &
churn_pid=$!
exec 3>"$tmp/stdin" # the program runs until this closes
for _ in $(seq 200); do grep -q '^pid' "$tmp/churn.out" && break; sleep 0.05; done
grep -q '^pid' "$tmp/churn.out" || die "jit_churn did not start"

"$sampler" "$churn_pid" --samples 1500 --freq 997 --max-seconds 600 -o "$tmp/samples.jsonl" 3>&- 2>"$tmp/sampler.err"
rc=$?
exec 3>&-
wait "$churn_pid"
cat "$tmp/sampler.err"
[ $rc = 77 ] && exit 77
[ $rc = 0 ] || die "the sampler failed ($rc)"

/usr/bin/python3 - "$tmp/samples.jsonl" "$tmp/truth.log" <<'PY' || die "samples misnamed"
import bisect, collections, json, sys
events = collections.defaultdict(list)  # start -> [(t, name or None)]
size = {}
for line in open(sys.argv[2]):
    f = line.split()
    if f[0] == "reg":
        start = int(f[1], 16)
        size[start] = int(f[2], 16)
        events[start].append((int(f[4]), f[3]))
    elif f[0] == "unreg":
        events[int(f[1], 16)].append((int(f[2]), None))
for ev in events.values():
    ev.sort()
starts = sorted(size)

def truth(pc, t):
    i = bisect.bisect_right(starts, pc) - 1
    if i < 0 or pc >= starts[i] + size[starts[i]]:
        return None
    ev = events[starts[i]]
    j = bisect.bisect_right(ev, (t, "\xff")) - 1
    return ev[j][1] if j >= 0 else None

total = right = 0
wrong = collections.Counter()
for line in open(sys.argv[1]):
    s = json.loads(line)
    want = truth(s["pc"], s["t"])
    if want is None:
        continue
    total += 1
    if s["status"] == "found" and s["name"] == want:
        right += 1
    else:
        wrong[s["status"]] += 1
print(f"{right}/{total} samples in registered code named right by their sampled generation; wrong: {dict(wrong)}")
assert total >= 200, "too few samples in JIT code"
assert right >= 0.95 * total
PY
echo PASS
