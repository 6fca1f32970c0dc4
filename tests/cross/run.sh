#!/usr/bin/env bash
# Build jitframes for ARCH with its toolchain file (cmake/toolchain-ARCH-linux-gnu.cmake),
# UBSan on, install it into a private prefix, build the cross tests
# (tests/cross) against it and run those labelled LABEL under qemu-ARCH.
# Every LABEL shares BUILD_DIR: the builds are locked and incremental.
# Usage: run.sh aarch64|riscv64|ppc64le|s390x SOURCE_DIR BUILD_DIR CFI_EXTRACT LABEL [HOST_TOOL]
# HOST_TOOL: the build machine's jitframes, for the hostcheck tests.
set -euo pipefail
arch=$1 src=$2 build=$3 extract=$4 label=$5 host_tool=${6:-}
case $arch in
  ppc64le) triple=powerpc64le-linux-gnu ;;
  *) triple=$arch-linux-gnu ;;
esac
for tool in "$triple-gcc" "qemu-$arch"; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed (scripts/deps installs it)"; exit 77; }
done
[ -d "/usr/$triple/lib" ] || { echo "SKIP: no /usr/$triple sysroot (libc6-dev-*-cross)"; exit 77; }

# Debian 12's riscv64 cross gcc ships no libubsan: trap on undefined
# behaviour instead (SIGILL/SIGTRAP fails the test just the same).
case $arch in
  riscv64) sanitize=(-DJITFRAMES_SANITIZE= "-DCMAKE_C_FLAGS=-fsanitize=undefined -fsanitize-undefined-trap-on-error") ;;
  *) sanitize=(-DJITFRAMES_SANITIZE=undefined) ;;
esac
common=(-DCMAKE_TOOLCHAIN_FILE="$src/cmake/toolchain-$triple.cmake" -DCMAKE_BUILD_TYPE=RelWithDebInfo
        "${sanitize[@]}")

mkdir -p "$build"
exec 9>"$build/lock"
flock 9
cmake -S "$src" -B "$build/lib" "${common[@]}" -DJITFRAMES_CFI_EXTRACT="$extract" \
  -DJITFRAMES_BUILD_TESTS=OFF -DJITFRAMES_BUILD_TOOLS=OFF -DJITFRAMES_BUILD_EXAMPLES=OFF \
  -DJITFRAMES_BUILD_BENCH=OFF -DJITFRAMES_WERROR=OFF -DCMAKE_INSTALL_PREFIX="$build/prefix" >/dev/null
cmake --build "$build/lib" -j 2 >/dev/null
cmake --install "$build/lib" >/dev/null
cmake -S "$src/tests/cross" -B "$build/tests" "${common[@]}" \
  -DJITFRAMES_SOURCE_DIR="$src" -DCMAKE_PREFIX_PATH="$build/prefix" -DJITFRAMES_HOST_TOOL="$host_tool" >/dev/null
cmake --build "$build/tests" -j 2 >/dev/null
flock -u 9
log=$build/tests/$label.log
status=0
ctest --test-dir "$build/tests" -L "$label" --output-on-failure -V >"$log" 2>&1 || status=$?
grep -E '^[0-9]+: (\[|#|ok:|FAIL|_Unwind)|tests passed|Passed|Failed' "$log" || true
[ "$status" = 0 ] || tail -40 "$log"
exit "$status"
