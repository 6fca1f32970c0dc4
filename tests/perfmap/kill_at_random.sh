#!/usr/bin/env bash
# A perf map killed at random instants is read right by every reader.
# 1. kill_at_random: N children killed after a random 0-1.5 ms of registering;
#    each map checked by the tool's parser (a prefix of what was registered,
#    nothing torn, at most one unpublished "##" line); samples kept.
# 2. Every sample through `jitframes check` and through bcc's own perf map
#    parser (libbcc's bcc_perf_map_foreach_sym, what BPF.sym and bpftrace
#    use): every symbol bcc reads is a registered region, by address and name.
# 3. perf: a process registering while a JIT function spins is killed at a
#    random instant under `perf record`; perf reads its map after the kill
#    and names every sample in the spinning function.
# Usage: kill_at_random.sh KILL_AT_RANDOM JITFRAMES_TOOL N [PERF_RUNS]
set -uo pipefail
driver=$1 tool=$2 n=$3 perf_runs=${4:-8}
work=$(mktemp -d /tmp/jf-kill-random.XXXXXX)
spin_pid=
cleanup() {
  [ -n "$spin_pid" ] && rm -f "/tmp/perf-$spin_pid.map"
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

mkdir "$work/samples"
"$driver" "$n" "$work/samples" || fail "kill_at_random found a bad map (above)"
samples=("$work"/samples/*.map)
[ -e "${samples[0]}" ] || fail "no sample kept"
echo "${#samples[@]} samples"

for f in "${samples[@]}"; do
  "$tool" check "$f" >"$work/check" 2>&1 || fail "jitframes check $f: $(cat "$work/check")"
done
echo "ok: jitframes check accepts all ${#samples[@]} samples"

/usr/bin/python3 - "${samples[@]}" <<'PY' || exit 1
import ctypes, re, sys
try:
    bcc = ctypes.CDLL("libbcc.so.0")
except OSError as e:
    print("SKIP: bcc's library is not installed (Debian libbpfcc):", e)
    sys.exit(77)
CB = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_void_p)
bcc.bcc_perf_map_foreach_sym.argtypes = [ctypes.c_char_p, CB, ctypes.c_void_p]
BASE = 0x7c0000000000
name_re = re.compile(r"^k(\d+)_(_*)$")
total = 0
for path in sys.argv[1:]:
    syms = []
    cb = CB(lambda name, begin, size, _: syms.append((name.decode(), begin, size)) or 0)
    if bcc.bcc_perf_map_foreach_sym(path.encode(), cb, None) != 0:
        sys.exit("FAIL: bcc cannot read %s" % path)
    with open(path) as f:
        entries = sum(1 for line in f if line.strip() and not line.startswith("##"))
    if len(syms) != entries:
        sys.exit("FAIL: %s: bcc reads %d symbols, the map has %d entries" % (path, len(syms), entries))
    for i, (name, begin, size) in enumerate(syms):
        m = name_re.match(name)
        if not m or int(m.group(1)) != i or begin != BASE + 64 * i or size != 64:
            sys.exit("FAIL: %s: bcc's symbol %d is %r at %x+%x" % (path, i, name[:60], begin, size))
    total += len(syms)
print("ok: bcc reads every sample: %d symbols, each a registered region in order" % total)
PY
rc=$?
[ "$rc" = 0 ] || exit "$rc"

command -v perf >/dev/null 2>&1 || { echo "SKIP: perf is not installed"; exit 77; }
export HOME="$work/home"
mkdir -p "$HOME"
hz=$(getconf CLK_TCK)
for run in $(seq 1 "$perf_runs"); do
  d="$work/perf$run"
  mkdir "$d"
  perf record -q -e cpu-clock -F 4000 -o "$d/perf.data" -- "$driver" 1 "$d" "$d/spin" >"$d/out" 2>&1 &
  rec=$!
  for _ in $(seq 1 1200); do [ -s "$d/spin" ] && break; sleep 0.05; done
  [ -s "$d/spin" ] || { kill "$rec"; fail "run $run: the spinning child did not start: $(cat "$d/out")"; }
  read -r spin_pid spin_addr <"$d/spin"
  # Killed once it has run a random 50-90 ms of CPU time (at 4000 Hz, 200
  # samples or more, wanted: 30), however busy the machine: a count of
  # samples, not a wall-clock window. At most 60 s.
  want=$(( (50 + RANDOM % 41) * hz / 1000 + 1 ))
  for _ in $(seq 6000); do
    [ "$(awk '{print $14 + $15}' "/proc/$spin_pid/stat" 2>/dev/null || echo "$want")" -ge "$want" ] && break
    sleep 0.01
  done
  kill -KILL "$spin_pid"
  wait "$rec" 2>/dev/null # perf record ends with its workload's SIGKILL
  map=/tmp/perf-$spin_pid.map
  "$tool" check "$map" >"$d/check" 2>&1 || fail "run $run: jitframes check: $(cat "$d/check")"
  lines=$(grep -c . "$map") unpublished=$(grep -c '^##' "$map")
  # Kills here land mostly between registrations (the child sleeps to keep
  # its map small): every other run, perf reads a map of step 1 that ends in
  # an unpublished line instead, with the spinning function's line added.
  spliced=
  if [ $((run % 2)) = 0 ] && with_hidden=$(grep -l '^##' "${samples[@]}" | sed -n 1p) && [ -n "$with_hidden" ]; then
    { cat "$with_hidden"; grep ' jf_killed_spin$' "$map"; } >"$map.new" && mv "$map.new" "$map"
    lines=$(grep -c . "$map") unpublished=$(grep -c '^##' "$map") spliced=" (step 1's $(basename "$with_hidden"))"
  fi
  perf script -i "$d/perf.data" -F ip,sym >"$d/script" 2>"$d/script.err"
  ! grep -q ' #' "$d/script" || fail "run $run: perf shows a symbol from an unpublished line"
  lo=$((16#$spin_addr)) in_spin=0 named=0
  while read -r ip sym _; do
    [[ $ip =~ ^[0-9a-f]+$ ]] || continue
    (( 16#$ip >= lo && 16#$ip < lo + 15 )) || continue
    in_spin=$((in_spin + 1))
    [ "$sym" = jf_killed_spin ] && named=$((named + 1))
  done <"$d/script"
  [ "$in_spin" -ge 30 ] || fail "run $run: only $in_spin samples in the spinning function"
  [ "$named" = "$in_spin" ] || fail "run $run: perf names $named of $in_spin samples jf_killed_spin: $(grep -v jf_killed_spin "$d/script" | head -3)"
  echo "ok: run $run: a map of $lines lines, $unpublished unpublished$spliced; perf names all $in_spin samples in the JIT function"
  rm -f "$map"
  spin_pid=
done
echo PASS
