#!/usr/bin/env bash
# The CPython client on a foreign architecture (ppc64le, s390x): jitframes,
# the _jitframes extension and a python3.11 embedding host cross-built
# against Debian's CPython 3.11 for ARCH unpacked in SYSROOT
# (scripts/python-sysroot, run by scripts/deps), then run under qemu-ARCH by
# cross_runtime.py (MODE check: returns through the trampolines, perf map
# names, gdb-multiarch bt; MODE control: the walk without the gdb sink).
# Usage: cross.sh ARCH SOURCE_DIR BUILD_DIR CFI_EXTRACT SYSROOT check|control
set -uo pipefail
arch=$1 src=$2 build=$3 extract=$4 sysroot=$5 mode=$6
. "$src/tests/support/cross_lib.sh"
triple=$(cross_triple "$arch")
for tool in "$triple-gcc" "qemu-$arch" gdb-multiarch; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed (scripts/deps installs it)"; exit 77; }
done
[ -e "$sysroot/usr/lib/$triple/libpython3.11.so" ] ||
  { echo "SKIP: no CPython 3.11 for $arch in $sysroot (scripts/deps test makes it with scripts/python-sysroot)"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

# The library build is shared with tests/gdb's cross tests.
cross_lib "$arch" "$src" "$build" "$extract" || fail "building jitframes for $arch"
cmake -S "$src/tests/python/cross" -B "$build/python" -DCMAKE_TOOLCHAIN_FILE="$src/cmake/toolchain-$triple.cmake" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DJITFRAMES_SOURCE_DIR="$src" -DCMAKE_PREFIX_PATH="$build/prefix" \
  -DPYTHON_SYSROOT="$sysroot" >"$build/python.log" 2>&1 || { cat "$build/python.log"; fail "configure the CPython client for $arch"; }
cmake --build "$build/python" >>"$build/python.log" 2>&1 || { tail -30 "$build/python.log"; fail "build the CPython client for $arch"; }
flock -u 9
echo "CPython for $arch: $(grep -o 'libpython3.11_[^_]*' "$sysroot/PACKAGES" 2>/dev/null)"
exec python3 "$src/tests/python/cross_runtime.py" "qemu-$arch" "$sysroot" "$build/python/python_embed" \
  "$build/python/pkg" "$mode"
