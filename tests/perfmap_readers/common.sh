# Shared by the perf map reader tests: start jit_target and wait for it.
# Usage: . common.sh; start_target TARGET N SPIN_US  -> sets PID JIT_ADDR ...
set -euo pipefail

WORK=$(mktemp -d)
TARGET_PID=
cleanup() {
  [ -n "$TARGET_PID" ] && { touch "$WORK/stop"; wait "$TARGET_PID" 2>/dev/null || true; }
  [ -n "${PID:-}" ] && rm -f "/tmp/perf-$PID.map" "/tmp/perf-$PID.map.aside"
  rm -rf "$WORK"
}
trap cleanup EXIT

start_target() { # binary n spin_us
  "$1" "$WORK/ready" "$WORK/stop" "$2" "$3" &
  TARGET_PID=$!
  for _ in $(seq 1 1200); do
    [ -s "$WORK/ready" ] && break
    kill -0 "$TARGET_PID" 2>/dev/null || { echo "FAIL: jit_target exited early"; exit 1; }
    sleep 0.1
  done
  [ -s "$WORK/ready" ] || { echo "FAIL: jit_target not ready after 120 s"; exit 1; }
  read -r PID JIT_ADDR JIT_SIZE BULK_ADDR BULK_SIZE BULK_N UNREGISTERED < "$WORK/ready"
  echo "jit_target pid $PID, JIT function at $JIT_ADDR, map /tmp/perf-$PID.map ($(wc -l < "/tmp/perf-$PID.map") lines)"
}
