#!/usr/bin/env bash
# Install this build's library (not the Python modules, which go to each
# interpreter's own site-packages) into a temporary prefix, move the prefix
# (installs must be relocatable), then build and run a consumer four ways:
# pkg-config jitframes (shared) and jitframes-static (the archive itself),
# find_package's jitframes::jitframes and jitframes::jitframes_static. The
# static builds must not need libjitframes.so and must keep the GDB JIT
# interface in their dynamic symbol table.
# With PREFIX, the same checks of files installed there by other means
# (deb_packages.sh: the Debian packages unpacked into a scratch root).
# Usage: install_and_consume.sh BUILD_DIR SOURCE_DIR C_COMPILER [PREFIX]
set -euo pipefail
# Reads all of its input (grep -q quits at the first match, and the writer's
# SIGPIPE would then fail the pipeline under pipefail).
grep_all() { grep "$@" >/dev/null; }
build=$1 src=$2 cc=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

if [ $# -ge 4 ]; then
  prefix=$4
else
  for component in runtime dev tools; do
    cmake --install "$build" --prefix "$tmp/first" --component $component >/dev/null
  done
  mv "$tmp/first" "$tmp/prefix"
  prefix=$tmp/prefix
fi
pcdir=$(dirname "$(find "$prefix" -name jitframes.pc | sed -n 1p)")
[ -n "$pcdir" ] || fail "no jitframes.pc installed"
export PKG_CONFIG_PATH=$pcdir
libdir=$(pkg-config --variable=libdir jitframes)
[ -e "$libdir/libjitframes.so" ] || fail "pkg-config's libdir $libdir (after moving the prefix) has no libjitframes.so"
echo "ok: pkg-config finds the moved prefix: $libdir"
for page in man1/jitframes.1.gz man3/jitframes.3.gz; do
  [ -e "$prefix/share/man/$page" ] || fail "man page $page not installed"
done
# The installed tool finds its record script (libexec/jitframes), which runs.
"$prefix/bin/jitframes" record --help >"$tmp/record.out" 2>&1 ||
  { cat "$tmp/record.out"; fail "installed jitframes record --help"; }
grep -q "usage: jitframes record" "$tmp/record.out" || fail "installed record: $(cat "$tmp/record.out")"
echo "ok: the installed jitframes record finds its script"
# The archive's global symbols: the API (jf_*), the library's own (jf__*)
# and the GDB JIT interface; nothing that could clash with its host's names.
stray=$(nm -g --defined-only "$libdir/libjitframes.a" | awk 'NF == 3 {print $3}' |
        grep -vE '^(jf_|__jit_debug_(register_code|descriptor)$)' || true)
[ -z "$stray" ] || fail "libjitframes.a defines non-jf_ globals: $stray"
echo "ok: every global of libjitframes.a is jf_*, jf__* or the GDB JIT interface"

check_static() { # EXE
  if readelf -d "$1" | grep_all 'libjitframes'; then fail "$1 needs libjitframes.so"; fi
  nm -D "$1" | grep_all ' __jit_debug_register_code$' || fail "$1 hides __jit_debug_register_code"
  nm -D "$1" | grep_all ' __jit_debug_descriptor$' || fail "$1 hides __jit_debug_descriptor"
}
run() { # EXE: it registers and finds its perf map line
  LD_LIBRARY_PATH=$libdir "$1" || fail "$1 did not work"
}

# shellcheck disable=SC2046
"$cc" -o "$tmp/pc_shared" "$src/tests/packaging/consumer/consumer.c" $(pkg-config --cflags --libs jitframes)
readelf -d "$tmp/pc_shared" | grep_all 'libjitframes.so' || fail "pc_shared does not use the shared library"
run "$tmp/pc_shared"
# shellcheck disable=SC2046
"$cc" -o "$tmp/pc_static" "$src/tests/packaging/consumer/consumer.c" $(pkg-config --cflags --libs jitframes-static)
check_static "$tmp/pc_static"
run "$tmp/pc_static"
echo "ok: pkg-config jitframes and jitframes-static"

cmake -S "$src/tests/packaging/consumer" -B "$tmp/fp" -DCMAKE_C_COMPILER="$cc" \
  -DCMAKE_PREFIX_PATH="$prefix" >"$tmp/fp.log" 2>&1 || { cat "$tmp/fp.log"; fail "find_package configure"; }
cmake --build "$tmp/fp" >>"$tmp/fp.log" 2>&1 || { cat "$tmp/fp.log"; fail "find_package build"; }
run "$tmp/fp/consumer_shared"
check_static "$tmp/fp/consumer_static"
run "$tmp/fp/consumer_static"
echo "ok: find_package jitframes::jitframes and jitframes::jitframes_static"
echo PASS
