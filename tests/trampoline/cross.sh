#!/usr/bin/env bash
# Build jitframes for ARCH with its toolchain file (cmake/toolchain-ARCH-linux-gnu.cmake),
# UBSan on, install it into a private prefix, build the trampoline unit tests
# against it (tests/trampoline/cross) and run them under qemu-ARCH.
# Usage: cross.sh aarch64|riscv64 SOURCE_DIR BUILD_DIR CFI_EXTRACT
set -euo pipefail
arch=$1 src=$2 build=$3 extract=$4
triple=$arch-linux-gnu
for tool in "$triple-gcc" "qemu-$arch"; do
  command -v "$tool" >/dev/null || { echo "$tool is not installed (scripts/deps installs it)"; exit 77; }
done
[ -d "/usr/$triple/lib" ] || { echo "no /usr/$triple sysroot (libc6-dev-*-cross)"; exit 77; }

# Debian 12's riscv64 cross gcc ships no libubsan: trap on undefined
# behaviour instead (SIGILL/SIGTRAP fails the test just the same).
case $arch in
  riscv64) sanitize=(-DJITFRAMES_SANITIZE= "-DCMAKE_C_FLAGS=-fsanitize=undefined -fsanitize-undefined-trap-on-error") ;;
  *) sanitize=(-DJITFRAMES_SANITIZE=undefined) ;;
esac
common=(-DCMAKE_TOOLCHAIN_FILE="$src/cmake/toolchain-$triple.cmake" -DCMAKE_BUILD_TYPE=RelWithDebInfo
        "${sanitize[@]}")

cmake -S "$src" -B "$build/lib" "${common[@]}" -DJITFRAMES_CFI_EXTRACT="$extract" \
  -DJITFRAMES_BUILD_TESTS=OFF -DJITFRAMES_BUILD_TOOLS=OFF -DJITFRAMES_BUILD_EXAMPLES=OFF \
  -DJITFRAMES_BUILD_BENCH=OFF -DJITFRAMES_WERROR=OFF -DCMAKE_INSTALL_PREFIX="$build/prefix" >/dev/null
cmake --build "$build/lib" -j 2 >/dev/null
cmake --install "$build/lib" >/dev/null
cmake -S "$src/tests/trampoline/cross" -B "$build/tests" "${common[@]}" \
  -DJITFRAMES_SOURCE_DIR="$src" -DCMAKE_PREFIX_PATH="$build/prefix" >/dev/null
cmake --build "$build/tests" -j 2 >/dev/null
ctest --test-dir "$build/tests" --output-on-failure -V | grep -E '^[0-9]+: (\[|#)' || true
ctest --test-dir "$build/tests" --output-on-failure
