#!/usr/bin/env bash
# A sampling profiler on bpftrace (profile:hz probe, ustack(perf), no kernel
# headers needed): samples of a process spinning below a framed JIT function
# name that function from the perf map jitframes wrote.
# Usage: bpftrace_profile.sh JIT_TARGET
. "$(dirname "$0")/common.sh"
target=$1

command -v bpftrace >/dev/null || { echo "SKIP: bpftrace is not installed (scripts/deps installs it)"; exit 77; }
start_target "$target" 10 5000
# 200 samples of the target, however long a busy machine takes to give them.
program="profile:hz:499 /pid == $PID/ { @[ustack(perf)] = count(); @n++; if (@n >= 200) { exit(); } }"
out=$(timeout 240 bpftrace -e "$program" 2>&1 | grep -v "RLIMIT_MEMLOCK\|ulimit -l" || true)
echo "--- bpftrace profile:hz:499, user stacks (first lines):"; echo "$out" | head -20 || true
if grep -q "Attaching" <<<"$out" && ! grep -q "@\[" <<<"$out"; then
  echo "FAIL: no samples of the target"; exit 1
fi
grep -q "jitframes bpftrace target" <<<"$out" || { echo "FAIL: the JIT function is not named in any sample"; exit 1; }
echo PASSED
