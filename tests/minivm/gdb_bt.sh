#!/usr/bin/env bash
# gdb stops minivm deep in calls.mvm (JITFRAMES=gdb): `bt` must name every
# interpreted function's trampoline, innermost first, with its source line,
# down to main. Negative control: without jitframes the same stop shows no
# interpreted names. Usage: gdb_bt.sh MINIVM PROGRAMS_DIR [ARCH]
# ARCH (a cross build of minivm): qemu-ARCH -g PORT runs it, gdb-multiarch
# attaches (tests/cross).
set -uo pipefail
minivm=$1 programs=$2 arch=${3:-}
stop='break mvm_eval_function if $_streq(fn->name, "helper")'

if [ -z "$arch" ]; then
  command -v gdb >/dev/null || { echo "SKIP: gdb is not installed"; exit 77; }
  backtrace() { # prints gdb's frames for a stop inside mvm:helper
    timeout 120 gdb -batch -nx -ex 'set debuginfod enabled off' -ex "$stop" -ex run -ex bt \
      --args "$minivm" "$programs/calls.mvm" 3 2>&1 | grep -E '^#'
  }
else
  command -v gdb-multiarch >/dev/null || { echo "SKIP: gdb-multiarch is not installed"; exit 77; }
  . "$(dirname "$0")/../support/cross_lib.sh"
  sysroot=/usr/$(cross_triple "$arch")
  out=$(mktemp -d)
  trap 'rm -rf "$out"; [ -n "${qpid:-}" ] && kill "$qpid" 2>/dev/null' EXIT
  backtrace() {
    start_gdbstub "$out/qemu.log" "qemu-$arch" -L "$sysroot" -E LD_LIBRARY_PATH=/lib \
      ${JITFRAMES:+-E JITFRAMES=$JITFRAMES} -- "$minivm" "$programs/calls.mvm" 3 ||
      { echo "qemu-$arch could not start a gdb stub" >&2; cat "$out/qemu.log" >&2; return 1; }
    timeout -k 5 240 gdb-multiarch -batch -nx -ex "set sysroot $sysroot" -ex 'set tcp connect-timeout 20' \
      -ex "file $minivm" -ex "target remote 127.0.0.1:$port" -ex "$stop" -ex continue -ex bt 2>&1 |
      grep -E '^#'
    kill "$qpid" 2>/dev/null; wait "$qpid" 2>/dev/null; qpid=
  }
fi

with=$(JITFRAMES=gdb backtrace)
echo "$with"
chain=$(echo "$with" | grep -oE 'mvm:[a-z_]+ \(\) at [^ ]*calls\.mvm:[0-9]+' | sed 's/ () at .*calls.mvm:/@/' | tr '\n' ' ')
expected='mvm:helper@40 mvm:compute@50 mvm:work@56 mvm:main@66 '
if [ "$chain" != "$expected" ]; then
  echo "FAIL: interpreted frames were '$chain', expected '$expected'"; exit 1
fi
echo "$with" | grep -q ' main (' || { echo "FAIL: bt does not reach main"; exit 1; }
if echo "$with" | grep -q '??'; then echo "FAIL: unnamed frames"; exit 1; fi

without=$(unset JITFRAMES; backtrace)
if ! echo "$without" | grep -q 'mvm_eval_function'; then
  echo "FAIL: negative control did not stop in the interpreter"; exit 1
fi
if echo "$without" | grep -q 'mvm:'; then
  echo "FAIL: negative control shows interpreted names without jitframes"; exit 1
fi
echo "PASS: gdb names the trampolines of the interpreted call chain, with lines"
