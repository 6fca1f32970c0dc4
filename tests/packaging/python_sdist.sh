#!/usr/bin/env bash
# The sdist as a package index would serve it, installed with no network:
# `python3 -m build --sdist --no-isolation bindings/python` (Debian's build
# and meson-python) makes it; it holds the C sources the build reads (not
# only bindings/python); `pip install --no-build-isolation --no-index` of it
# into a fresh venv, from outside the repository, with Debian's meson-python
# (scripts/python-wheels --backend-path), builds and installs; the installed
# client imports and its trampoline names a Python function in the perf map.
# Usage: python_sdist.sh PYTHON SOURCE_DIR BUILD_DIR
set -uo pipefail
python=$1 src=$2 build=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/jf-sdist.XXXXXX")
pid_file=$work/pid
trap '[ -s "$pid_file" ] && rm -f "/tmp/perf-$(cat "$pid_file").map"; rm -rf "$work"' EXIT
export HOME=$work/home  # pip's cache, private
mkdir -p "$HOME"
unset PYTHONPATH JITFRAMES JITFRAMES_CONTROL
fail() { echo "FAIL: $*"; exit 1; }
cd "$work" || exit 1
# One build from the source tree at a time (meson-python 0.12 writes
# bindings/python/.mesonpy-native-file.ini: the tests building from it take this lock).
flock "$build/.python-source-build.lock" /usr/bin/python3 -m build --sdist --no-isolation -o "$work/sdist" \
  "$src/bindings/python" >"$work/sdist.log" 2>&1 || { tail -30 "$work/sdist.log"; fail "python3 -m build --sdist"; }
sdist=$(ls "$work"/sdist/jitframes-*.tar.gz) || fail "no sdist made"
listing=$(tar tzf "$sdist")
for f in pyproject.toml meson.build build_with_cmake.py LICENSE jitframes/__init__.py jitframes/_hook.py jitframes/_startup.py PKG-INFO \
         jitframes-src/CMakeLists.txt jitframes-src/include/jitframes.h jitframes-src/src/CMakeLists.txt \
         jitframes-src/tools/CMakeLists.txt jitframes-src/bindings/python/src/module.c; do
  grep -q "^jitframes-[0-9.]*/$f\$" <<<"$listing" || fail "the sdist lacks $f"
done
tar xzf "$sdist" -O --wildcards '*/LICENSE' | grep "Permission is hereby granted" >/dev/null || fail "the sdist's LICENSE is no licence (a dangling symlink?)"
echo "ok: $(basename "$sdist"): $(stat -c %s "$sdist") bytes, $(wc -l <<<"$listing") entries, the C sources in jitframes-src/"

backend=$("$src/scripts/python-wheels" --backend-path) || fail "no meson-python"
"$python" -m venv "$work/venv" || fail "venv"
PYTHONPATH=$backend "$work/venv/bin/pip" install --no-index --no-cache-dir --no-build-isolation "$sdist" \
  >"$work/install.log" 2>&1 || { tail -40 "$work/install.log"; fail "pip install $(basename "$sdist") offline"; }
echo "ok: pip install --no-build-isolation --no-index $(basename "$sdist") into a fresh venv"
cat >"$work/prog.py" <<'PY'
import os, jitframes
def sdist_named_function(n):
    return sum(range(n))
jitframes.activate("perfmap")
sdist_named_function(10)
print(os.getpid())
PY
"$work/venv/bin/python" "$work/prog.py" >"$pid_file" 2>"$work/prog.err" || { cat "$work/prog.err"; fail "the installed client"; }
grep -q " py::sdist_named_function:$work/prog.py$" "/tmp/perf-$(cat "$pid_file").map" ||
  fail "the perf map does not name py::sdist_named_function"
echo "ok: the client installed from the sdist names py::sdist_named_function in /tmp/perf-$(cat "$pid_file").map"
echo PASS
