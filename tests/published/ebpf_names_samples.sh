#!/bin/bash
# The eBPF proof: tools/ebpf/jitframes_sample.py samples a process started
# with no environment at all (jit_churn: code unregistered and registered
# again elsewhere under new names all the time): the BPF program records
# each sample's pc with the table's generation, read in the kernel at
# sample time (where the table is: through jf_region_table), and the sampler
# names it by the region live at that generation, from the table read out
# of the process's memory. Against jit_churn's ground truth (which region
# was live at each address at each moment, CLOCK_MONOTONIC), at least
# MIN_RIGHT% of the samples whose pc lies in registered code carry the right
# name, over at least MIN_TOTAL such samples (count-based; the sampler stops
# at SAMPLES). Options:
#   --churn "FUNCS SPIN [BULK EVERY [GROWTHS]]"  jit_churn's arguments (its
#       bulk events begin with the SIGUSR1 sent once the sampler runs)
#   --samples N --min-total N --min-right PCT
#   --growths N --after-growth PCT --min-after N: the table grew N times, and
#       of the first MIN_AFTER samples in registered code after each growth
#       (the old sampler was blind for about a second then) at least PCT% are
#       named right
#   --max-seen N --min-reads N: the sampler remembered at most N regions at
#       any time, over at least N reads of the table
# Exits 77 only when the kernel refuses BPF (the sampler says why).
# Usage: ebpf_names_samples.sh JIT_CHURN SAMPLER JITFRAMES_CLI [options]
set -u
churn=$1 sampler=$2 cli=$3
shift 3
churn_args="8 20000" samples=1500 min_total=200 min_right=95 growths=0 after_growth=0 min_after=0
max_seen=0 min_reads=0
while [ $# -gt 0 ]; do
    case $1 in
    --churn) churn_args=$2 ;;
    --samples) samples=$2 ;;
    --min-total) min_total=$2 ;;
    --min-right) min_right=$2 ;;
    --growths) growths=$2 ;;
    --after-growth) after_growth=$2 ;;
    --min-after) min_after=$2 ;;
    --max-seen) max_seen=$2 ;;
    --min-reads) min_reads=$2 ;;
    *) echo "unknown option $1"; exit 2 ;;
    esac
    shift 2
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
die() { echo "FAIL: $*"; exit 1; }

read -r funcs spin rest <<<"$churn_args"
mkfifo "$tmp/stdin"
# shellcheck disable=SC2086 # rest: BULK EVERY [GROWTHS], words
env -i "$churn" "$funcs" 0 "$tmp/truth.log" "$spin" $rest <"$tmp/stdin" >"$tmp/churn.out" &
churn_pid=$!
exec 3>"$tmp/stdin" # the program runs until this closes
for _ in $(seq 1200); do grep -q '^pid' "$tmp/churn.out" && break; sleep 0.05; done
grep -q '^pid' "$tmp/churn.out" || die "jit_churn did not start"

# The sampler finds the C reader on PATH.
PATH="$(dirname "$cli"):$PATH" "$sampler" "$churn_pid" --samples "$samples" --freq 997 --max-seconds 600 \
    -o "$tmp/samples.jsonl" 3>&- 2>"$tmp/sampler.err" &
sampler_pid=$!
for _ in $(seq 12000); do
    grep -qs "sampling process" "$tmp/sampler.err" && break
    kill -0 "$sampler_pid" 2>/dev/null || break
    sleep 0.05
done
kill -USR1 "$churn_pid" # bulk events from now on
wait "$sampler_pid"
rc=$?
exec 3>&-
wait "$churn_pid"
grep -v 'kernel headers\|modprobe\|chdir(' "$tmp/sampler.err"
[ $rc = 77 ] && exit 77
[ $rc = 0 ] || die "the sampler failed ($rc)"
[ "$(grep -c '^grow' "$tmp/truth.log")" = "$growths" ] || die "the table did not grow $growths times"
if [ "$max_seen" -gt 0 ]; then
    summary=$(grep 'regions seen' "$tmp/sampler.err")
    seen=$(sed -n 's/.* \([0-9]*\) regions seen.*/\1/p' <<<"$summary")
    reads=$(sed -n 's/.* \([0-9]*\) reads of the table.*/\1/p' <<<"$summary")
    echo "remembered at most $seen regions (bound $max_seen) over $reads reads of the table"
    [ "${reads:-0}" -ge "$min_reads" ] || die "only ${reads:-0} reads of the table (want $min_reads)"
    [ "${seen:-999999999}" -le "$max_seen" ] || die "the sampler remembered ${seen:-?} regions (bound $max_seen)"
fi

/usr/bin/python3 - "$tmp/samples.jsonl" "$tmp/truth.log" "$min_total" "$min_right" "$after_growth" \
    "$min_after" <<'PY' || die "samples misnamed"
import bisect, collections, json, sys
min_total, min_right, after_growth, min_after = int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
events = collections.defaultdict(list)  # start -> [(t, name or None)]
size = {}
grown = []
for line in open(sys.argv[2]):
    f = line.split()
    if f[0] == "reg":
        start = int(f[1], 16)
        size[start] = int(f[2], 16)
        events[start].append((int(f[4]), f[3]))
    elif f[0] == "unreg":
        events[int(f[1], 16)].append((int(f[2]), None))
    elif f[0] == "grow":
        grown.append(int(f[1]))
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
judged = []  # (t, named right) of each sample in registered code
for line in open(sys.argv[1]):
    s = json.loads(line)
    want = truth(s["pc"], s["t"])
    if want is None:
        continue
    ok = s["status"] == "found" and s["name"] == want
    total += 1
    right += ok
    judged.append((s["t"], ok))
    if not ok:
        wrong[s["status"]] += 1
print(f"{right}/{total} samples in registered code named right by their sampled generation; wrong: {dict(wrong)}")
assert total >= min_total, f"too few samples in JIT code (want {min_total})"
assert right >= min_right / 100 * total, f"under {min_right}% named right"
judged.sort()
for n, g in enumerate(grown):
    after = [ok for t, ok in judged if t >= g][:min_after]
    print(f"growth {n + 1}: {sum(after)}/{len(after)} of the first samples in registered code after it named right")
    assert len(after) >= min_after, f"fewer than {min_after} samples after growth {n + 1}"
    assert sum(after) >= after_growth / 100 * len(after), f"under {after_growth}% named right after growth {n + 1}"
PY
echo PASS
