#!/usr/bin/env bash
# How long `jitframes record --via memory` takes after its recording ends,
# on a churning process: jit_churn FUNCS functions, each call spinning SPIN
# times, one retired and registered again elsewhere per cycle (about 2,500
# new regions a second with the defaults here: some 20,000 in an 8 s
# recording). Prints record's summary lines: the regions the follower kept
# and where the time after the recording went (perf record's wrap-up, perf
# inject --jit, perf script and the flame graph), and the wall time of the
# whole command. A benchmark, not a test: run it on a quiet machine.
# Usage: record_after.sh JITFRAMES JIT_CHURN [SECONDS [FUNCS [SPIN]]]
set -euo pipefail
tool=$(realpath "$1") churn=$(realpath "$2") seconds=${3:-8} funcs=${4:-200} spin=${5:-2000}
work=$(mktemp -d "${TMPDIR:-/tmp}/jf-record-after.XXXXXX")
pid=
trap 'exec 3>&- 2>/dev/null; [ -n "$pid" ] && wait "$pid" 2>/dev/null; rm -rf "$work"' EXIT
export HOME=$work/home  # perf's build-id cache stays out of the real ~/.debug
mkdir "$HOME"

mkfifo "$work/in"
"$churn" "$funcs" 0 "$work/truth.log" "$spin" <"$work/in" >"$work/out" 2>&1 &
pid=$!
exec 3>"$work/in"
for _ in $(seq 600); do grep -q '^pid' "$work/out" && break; sleep 0.05; done
grep -q '^pid' "$work/out" || { echo "jit_churn did not start" >&2; exit 1; }

begin=$(date +%s.%N)
"$tool" record "$pid" --via memory --duration "$seconds" -o "$work/rec" >"$work/rec.log" 2>&1 || true
end=$(date +%s.%N)
exec 3>&-
grep -E "^  via memory|after the recording|^jitframes record: " "$work/rec.log" | grep -v '^jitframes record: [0-9]* via its memory'
regs=$(grep -c '^reg ' "$work/truth.log" || true)
echo "jit_churn: $regs regions registered in all"
awk -v b="$begin" -v e="$end" -v s="$seconds" \
  'BEGIN { printf "record: %.1f s wall for a %g s recording: %.1f s beyond it\n", e - b, s, e - b - s }'
