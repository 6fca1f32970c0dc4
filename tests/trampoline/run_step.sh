#!/usr/bin/env bash
# Drive gdb through step.py on a step program.
# Usage: run_step.sh native|aarch64|riscv64|ppc64le|s390x PROGRAM STEP_PY [--expect-fail]
# native: gdb runs the program. Otherwise qemu-<arch> -g PORT runs it
# (sysroot /usr/<triple>) and gdb-multiarch attaches. Every wait is
# capped. --expect-fail: a negative control; succeed only if gdb's walk fails.
set -u
mode=$1 prog=$2 script=$3 expect=${4:-}
out=$(mktemp -d)
size=$(readelf -sW "$prog" | awk '$8 == "jitframes_trampoline_template" { print $3 }')
[ -n "$size" ] || { echo "no jitframes_trampoline_template symbol in $prog"; exit 1; }
trap 'rm -rf "$out"; [ -n "${qpid:-}" ] && kill "$qpid" 2>/dev/null' EXIT

if [ "$mode" = native ]; then
  command -v gdb >/dev/null || { echo "gdb not installed"; exit 77; }
  timeout 120 gdb -batch -nx -ex 'set pagination off' -ex "set \$template_size = $size" -ex 'break step_caller' -ex run \
    -x "$script" "$prog" >"$out/log" 2>&1
else
  command -v gdb-multiarch >/dev/null || { echo "gdb-multiarch not installed"; exit 77; }
  command -v "qemu-$mode" >/dev/null || { echo "qemu-$mode not installed"; exit 77; }
  case $mode in
    ppc64le) sysroot=/usr/powerpc64le-linux-gnu ;;
    *) sysroot=/usr/$mode-linux-gnu ;;
  esac
  for attempt in 1 2 3 4 5; do
    port=$((20000 + (RANDOM * 7 + $$ + attempt * 131) % 40000))
    # LD_LIBRARY_PATH: see cmake/cross-linux-gnu.cmake
    "qemu-$mode" -L "$sysroot" -E LD_LIBRARY_PATH=/lib -g "$port" "$prog" >"$out/qemu.log" 2>&1 &
    qpid=$!
    sleep 0.3
    kill -0 "$qpid" 2>/dev/null && break   # still alive: it bound the port
    qpid=
  done
  [ -n "${qpid:-}" ] || { echo "qemu-$mode could not start a gdb stub"; cat "$out/qemu.log"; exit 1; }
  timeout 180 gdb-multiarch -batch -nx -ex 'set pagination off' -ex "set sysroot $sysroot" \
    -ex 'set tcp connect-timeout 20' -ex "file $prog" -ex "target remote 127.0.0.1:$port" \
    -ex "set \$template_size = $size" -ex 'break step_caller' -ex continue -x "$script" >"$out/log" 2>&1
  kill "$qpid" 2>/dev/null
  wait "$qpid" 2>/dev/null
  qpid=
fi

cat "$out/log"
if grep -q '^STEP-PASS' "$out/log" && ! grep -q '^STEP-FAIL' "$out/log"; then
  [ "$expect" = --expect-fail ] && { echo "negative control: the walk should have failed"; exit 1; }
  exit 0
fi
if [ "$expect" = --expect-fail ] && grep -q '^STEP-FAIL' "$out/log"; then
  echo "negative control failed as expected"
  exit 0
fi
exit 1
