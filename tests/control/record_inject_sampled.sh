#!/usr/bin/env bash
# record_gives_perf_inject_only_the_regions_samples_fall_in: `jitframes
# record --via memory` on jit_churn (200 functions, one moved per cycle of
# 200 calls of 1,000 spins: about 5 new regions per sample, by CPU time on
# any machine) makes no more jitted-PID-N.so files (perf inject's one per
# CODE_LOAD, most of its time) than the process has samples (with frame
# pointers, one JIT frame per sample), where the old code made one per
# region followed; and every sample in churned code is still named.
# Usage: record_inject_sampled.sh JITFRAMES_TOOL JIT_CHURN BUILD_DIR
set -uo pipefail
tool=$(realpath "$1") churn=$(realpath "$2") build=$3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../support/record_env.sh"

mkfifo "$work/churn.in"
env -u JITFRAMES_CONTROL "$churn" 200 0 "$work/truth.log" 1000 <"$work/churn.in" >"$work/churn.out" 2>&1 &
pid=$!; pids+=("$pid")
exec 3>"$work/churn.in"
for _ in $(seq 400); do grep -q '^pid' "$work/churn.out" && break; sleep 0.05; done
grep -q '^pid' "$work/churn.out" || fail "jit_churn did not start"
record_cpu "$work/rec" 1500 --call-graph fp || { cat "$work/rec.log"; fail "record jit_churn"; }
cat "$work/rec.log"
kept=$(sed -n 's/.* \([0-9]*\) regions kept (.*/\1/p' "$work/rec.log")
files=$(find "$work/rec/jit" -name "jitted-$pid-*.so" | wc -l)
perf script -i "$work/rec/perf.jit.data" -F ip,sym --pid "$pid" 2>/dev/null >"$work/script"
samples=$(awk 'BEGIN { RS = "" } END { print NR }' "$work/script")
churned=$(awk 'BEGIN { RS = ""; FS = "\n" } { split($1, f, " ") } f[2] ~ /^churn_g/ { n++ } END { print n + 0 }' "$work/script")
unnamed=$(awk 'BEGIN { RS = ""; FS = "\n" } { split($1, f, " ") } f[2] == "[unknown]" { n++ } END { print n + 0 }' "$work/script")
echo "$kept regions followed, $files jitted-*.so made, $samples samples ($churned in churned code, $unnamed unnamed)"
[ "${kept:-0}" -ge 1000 ] || fail "only ${kept:-no} regions followed: the test proves nothing"
[ "$kept" -ge $((2 * samples)) ] || fail "$kept regions for $samples samples: the test proves nothing"
[ "$files" -le "$samples" ] || fail "$files jitted-*.so for $samples samples: perf inject got regions no sample falls in"
[ "$churned" -ge $((samples * 8 / 10)) ] && [ "$unnamed" -le $((samples / 100)) ] ||
  fail "$churned of $samples samples named in churned code, $unnamed unnamed"
exec 3>&-
wait "$pid" || fail "jit_churn failed"
echo PASS
