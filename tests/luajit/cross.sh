#!/usr/bin/env bash
# gdb through LuaJIT's compiled traces on a foreign architecture: the
# distribution's LuaJIT for ARCH (Debian multiarch, libluajit-5.1-dev:arm64),
# jitframes, the module and ffi_host cross-built, ffi_host run by
# qemu-ARCH -g PORT, gdb-multiarch attached running gdb_walk_traces.py
# (every instruction of the traces it walks; WALK=control: without the module).
# Usage: cross.sh ARCH SOURCE_DIR BUILD_DIR CFI_EXTRACT [check|control]
set -uo pipefail
arch=$1 src=$2 build=$3 extract=$4 mode=${5:-check}
triple=$arch-linux-gnu
for tool in "$triple-gcc" "qemu-$arch" gdb-multiarch; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed (scripts/deps installs it)"; exit 77; }
done
for f in "/usr/lib/$triple/libluajit-5.1.so" "/lib/ld-linux-$arch.so.1"; do
  [ -e "$f" ] || { echo "SKIP: no $f (scripts/deps installs libluajit-5.1-dev:${arch/aarch64/arm64})"; exit 77; }
done
fail() { echo "FAIL: $*"; exit 1; }
. "$src/tests/support/cross_lib.sh"

cross_lib "$arch" "$src" "$build" "$extract" || fail "building jitframes for $arch"
cmake -S "$src/tests/luajit/cross" -B "$build/luajit" -DCMAKE_TOOLCHAIN_FILE="$src/cmake/toolchain-$triple.cmake" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DJITFRAMES_SOURCE_DIR="$src" -DCMAKE_PREFIX_PATH="$build/prefix" \
  >"$build/luajit.log" 2>&1 || { cat "$build/luajit.log"; fail "configure the LuaJIT module for $arch"; }
cmake --build "$build/luajit" >>"$build/luajit.log" 2>&1 || { tail -30 "$build/luajit.log"; fail "build the LuaJIT module for $arch"; }
flock -u 9
host=$build/luajit/luajit_ffi_host

out=$(mktemp -d)
trap 'rm -rf "$out"; [ -n "${qpid:-}" ] && kill "$qpid" 2>/dev/null' EXIT
sinks=gdb
[ "$mode" = control ] && sinks=none
# The guest runs with the distribution's libraries for ARCH (-L /: multiarch).
SINKS=$sinks LUA_CPATH="$build/luajit/?.so" JITFRAMES_DIR=$out \
  start_gdbstub "$out/qemu.log" "qemu-$arch" -L / -- "$host" "$src/tests/luajit/ffi_bt.lua" ||
  { cat "$out/qemu.log"; fail "qemu-$arch could not start a gdb stub"; }
WALK=$mode WALK_REMOTE=1 timeout -k 5 600 gdb-multiarch -nx -batch -ex "set sysroot /" \
  -ex 'set tcp connect-timeout 20' -ex "file $host" -ex "target remote 127.0.0.1:$port" \
  -x "$src/tests/luajit/gdb_walk_traces.py" >"$out/log" 2>&1
rc=$?
kill "$qpid" 2>/dev/null; wait "$qpid" 2>/dev/null; qpid=
grep -E '^(TRACE_[0-9]+ \(|PASS|FAIL|control:)' "$out/log"
[ $rc -eq 0 ] && grep -q '^PASS' "$out/log" || { tail -30 "$out/log"; cat "$out/qemu.log"; fail "gdb-multiarch on $arch"; }
exit 0
