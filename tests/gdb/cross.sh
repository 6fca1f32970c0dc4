#!/usr/bin/env bash
# Single-step every instruction of the JIT functions and a trampoline copy
# on aarch64, riscv64, ppc64le or s390x: jitframes and jitprog cross-built
# with the toolchain file, jitprog run by qemu-ARCH -g PORT, gdb-multiarch
# attached running check_step.py. Usage: cross.sh ARCH SOURCE_DIR BUILD_DIR CFI_EXTRACT [--wrong-cfi]
set -uo pipefail
arch=$1 src=$2 build=$3 extract=$4 variant=${5:-}
. "$src/tests/support/cross_lib.sh"
triple=$(cross_triple "$arch")
sysroot=/usr/$triple
for tool in "$triple-gcc" "qemu-$arch" gdb-multiarch; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed (scripts/deps installs it)"; exit 77; }
done
[ -d "$sysroot/lib" ] || { echo "SKIP: no $sysroot sysroot (libc6-dev-*-cross)"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

# One build of the library per architecture, shared by the test, its
# negative control and the LuaJIT cross test (tests/luajit/cross.sh).
cross_lib "$arch" "$src" "$build" "$extract" || fail "building jitframes for $arch"
common=(-DCMAKE_TOOLCHAIN_FILE="$src/cmake/toolchain-$triple.cmake" -DCMAKE_BUILD_TYPE=RelWithDebInfo)
cmake -S "$src/tests/gdb/cross" -B "$build/prog" "${common[@]}" -DJITFRAMES_SOURCE_DIR="$src" \
  -DCMAKE_PREFIX_PATH="$build/prefix" >/dev/null || fail "configure jitprog for $arch"
cmake --build "$build/prog" >/dev/null || fail "build jitprog for $arch"
flock -u 9
prog=$build/prog/gdb_jitprog

out=$(mktemp -d)
trap 'rm -rf "$out"; [ -n "${qpid:-}" ] && kill "$qpid" 2>/dev/null' EXIT
[ "$variant" = --wrong-cfi ] && export JITPROG_WRONG_CFI=1
# LD_LIBRARY_PATH: see cmake/cross-linux-gnu.cmake
start_gdbstub "$out/qemu.log" "qemu-$arch" -L "$sysroot" -E LD_LIBRARY_PATH=/lib -- "$prog" step ||
  { cat "$out/qemu.log"; fail "qemu-$arch could not start a gdb stub"; }
timeout -k 5 240 gdb-multiarch -nx -batch -ex "set sysroot $sysroot" -ex 'set tcp connect-timeout 20' \
  -ex "file $prog" -ex "target remote 127.0.0.1:$port" -x "$src/tests/gdb/check_step.py" >"$out/log" 2>&1
rc=$?
kill "$qpid" 2>/dev/null; wait "$qpid" 2>/dev/null; qpid=
grep -E '^(call|PASS|FAIL)' "$out/log"
if [ "$variant" = --wrong-cfi ]; then
  [ $rc -ne 0 ] && grep -qE '^FAIL: call 2 step [0-9]+ pc' "$out/log" && { echo "negative control failed as expected"; exit 0; }
  tail -20 "$out/log"; fail "negative control: the wrong CFI was not caught"
fi
[ $rc -eq 0 ] && grep -q '^PASS' "$out/log" || { tail -30 "$out/log"; fail "gdb-multiarch on $arch"; }
exit 0
