#!/usr/bin/env bash
# The Debian packages made as docs/packaging.md says: a fresh build tree
# configured with -DCMAKE_INSTALL_PREFIX=/usr and no tests, built, then
# `cpack -G DEB` (nothing prepared beforehand: the tools component fetches
# the flame graph's d3 files itself). The fixture of the deb_* tests.
# Usage: deb_build.sh SOURCE_DIR OUT_DIR   (OUT_DIR/tree, OUT_DIR/debs)
set -euo pipefail
src=$1 out=$2
rm -rf "$out" && mkdir -p "$out"
log=$out/build.log
{ cmake -S "$src" -B "$out/tree" -DCMAKE_INSTALL_PREFIX=/usr -DJITFRAMES_BUILD_TESTS=OFF \
    -DJITFRAMES_BUILD_EXAMPLES=OFF -DJITFRAMES_BUILD_BENCH=OFF -DJITFRAMES_BUILD_PYTHON=OFF \
    -DJITFRAMES_BUILD_LUAJIT=OFF &&
  cmake --build "$out/tree" -j "${CMAKE_BUILD_PARALLEL_LEVEL:-2}" &&
  (cd "$out/tree" && cpack -G DEB -B "$out/debs"); } >"$log" 2>&1 ||
  { tail -40 "$log"; echo "FAIL: configure, build or cpack -G DEB (log: $log)"; exit 1; }
ls "$out"/debs/*.deb
echo PASS
