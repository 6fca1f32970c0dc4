#!/usr/bin/env bash
# Two builds of one commit give the same wheel, byte for byte:
# scripts/python-wheels run twice for one interpreter, each in build
# directories of its own (random names), from a copy of the source tree at
# another path the second time. A difference is shown by file.
# Usage: python_wheel_reproducible.sh SOURCE_DIR BUILD_DIR PYTHON
set -uo pipefail
src=$1 build=$2 py=$3
fail() { echo "FAIL: $*"; exit 1; }
JITFRAMES_FLAMEGRAPH_LIBS=$("$src/tests/support/flamegraph_libs.sh" "$build") || exit $?
export JITFRAMES_FLAMEGRAPH_LIBS CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2}
JITFRAMES_FLAMEGRAPH_LIBS=$(realpath "$JITFRAMES_FLAMEGRAPH_LIBS")
work=$(mktemp -d "${TMPDIR:-/tmp}/jf-repro.XXXXXX")
trap 'rm -rf "$work"' EXIT
# The commit's date for both (python-wheels takes it from git; the copy has none).
export SOURCE_DATE_EPOCH=$(git -C "$src" log -1 --format=%ct 2>/dev/null || echo 1700000000)
mkdir -p "$work/elsewhere"
tar -C "$src" --exclude=./build --exclude=./.git --exclude='./dist' -cf - . | tar -C "$work/elsewhere" -xf -
for n in 1 2; do
  tree=$src; [ $n = 2 ] && tree=$work/elsewhere
  flock "$build/.python-source-build.lock" "$tree/scripts/python-wheels" -o "$work/w$n" "$py" >"$work/w$n.log" 2>&1 ||
    { tail -40 "$work/w$n.log"; fail "scripts/python-wheels (build $n)"; }
done
a=$(ls "$work"/w1/*.whl) b=$(ls "$work"/w2/*.whl)
[ "$(basename "$a")" = "$(basename "$b")" ] || fail "two names: $(basename "$a") $(basename "$b")"
if ! cmp "$a" "$b"; then
  python3 - "$a" "$b" <<'PY'
import sys, zipfile
a, b = (zipfile.ZipFile(p) for p in sys.argv[1:])
for n in sorted(set(a.namelist()) | set(b.namelist())):
    da = a.read(n) if n in a.namelist() else None
    db = b.read(n) if n in b.namelist() else None
    if da != db:
        print("differs: %s (%s / %s bytes)" % (n, da and len(da), db and len(db)))
    elif a.getinfo(n).date_time != b.getinfo(n).date_time:
        print("differs: %s's date" % n)
PY
  fail "two builds of one commit give different wheels"
fi
echo "ok: $(basename "$a"): two builds (from $src and from a copy at another path) are byte-identical, $(stat -c %s "$a") bytes"
echo PASS
