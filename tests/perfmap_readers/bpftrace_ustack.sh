#!/usr/bin/env bash
# bpftrace's ustack(perf) names a JIT function from the perf map jitframes
# wrote. A uprobe fires in probe_leaf(), called from C code called by the
# framed JIT function; the user stack (frame pointers) passes through it.
# Negative control: with the map moved aside, a fresh bpftrace cannot name it.
# Usage: bpftrace_ustack.sh JIT_TARGET
. "$(dirname "$0")/common.sh"
target=$1

command -v bpftrace >/dev/null || { echo "SKIP: bpftrace is not installed (scripts/deps installs it)"; exit 77; }
if ! probe=$(timeout 120 bpftrace -e 'BEGIN { printf("bpf works\n"); exit(); }' 2>&1) ||
   ! grep -q "bpf works" <<<"$probe"; then
  echo "bpftrace cannot load a BPF program here, so this test cannot run:"
  echo "$probe" | sed 's/^/  | /'
  [ "$(id -u)" -ne 0 ] && echo "  (not root: bpftrace needs root or CAP_BPF + CAP_PERFMON)"
  exit 77
fi

start_target "$target" 10 0
program="uprobe:$target:probe_leaf /pid == $PID/ { printf(\"%s\", ustack(perf)); exit(); }"

run_bpftrace() {
  timeout 120 bpftrace -e "$program" 2>&1 | grep -v "RLIMIT_MEMLOCK\|ulimit -l" || true
}

out=$(run_bpftrace)
echo "--- bpftrace ustack(perf) with the map:"; echo "$out"
grep -q "jitframes bpftrace target" <<<"$out" || { echo "FAIL: the JIT function is not named"; exit 1; }
grep -q "probe_leaf" <<<"$out" || { echo "FAIL: the stack does not start at probe_leaf"; exit 1; }

mv "/tmp/perf-$PID.map" "/tmp/perf-$PID.map.aside"
out=$(run_bpftrace)
mv "/tmp/perf-$PID.map.aside" "/tmp/perf-$PID.map"
echo "--- without the map (negative control):"; echo "$out"
grep -q "probe_leaf" <<<"$out" || { echo "FAIL: no stack captured in the negative control"; exit 1; }
if grep -q "jitframes bpftrace target" <<<"$out"; then
  echo "FAIL: the JIT function was named without the perf map"; exit 1
fi
echo PASSED
