#!/usr/bin/env bash
# The wheels as scripts/python-wheels builds them (the fixture of the
# python_install_* tests), one per minor version of the interpreters given,
# each checked for what it must carry: the extension, the package, the
# start-up hook, the tool with its record script and flamegraph.py, the d3
# files of the page, and the console entry point `jitframes`.
# Usage: python_wheels.sh SOURCE_DIR BUILD_DIR PYTHON...
set -uo pipefail
src=$1 build=$2
shift 2
fail() { echo "FAIL: $*"; exit 1; }
JITFRAMES_FLAMEGRAPH_LIBS=$("$src/tests/support/flamegraph_libs.sh" "$build") || exit $?
export JITFRAMES_FLAMEGRAPH_LIBS CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2}
out=$build/wheels
rm -rf "$out"
"$src/scripts/python-wheels" -o "$out" "$@" >"$build/wheels.log" 2>&1 ||
  { tail -50 "$build/wheels.log"; fail "scripts/python-wheels"; }
for py in "$@"; do
  minor=$("$py" -c 'import sys; print("%d%d" % sys.version_info[:2])')
  whl=$(ls "$out"/jitframes-*-cp"$minor"-cp"$minor"-linux_*.whl) || fail "no cp$minor wheel"
  listing=$("$py" -m zipfile -l "$whl")
  for f in "jitframes/_jitframes.cpython-$minor-" jitframes/__init__.py jitframes/__main__.py \
           jitframes/_cli.py jitframes/_built_for.py jitframes.pth jitframes/_tool/jitframes jitframes/_tool/jitframes-record \
           jitframes/_tool/jfrecord_target.py jitframes/_tool/jfrecord_inject.py jitframes/_tool/jfrecord_confine.py \
           jitframes/_tool/flamegraph.py jitframes/flamegraph/node_modules/d3/dist/d3.min.js \
           jitframes/flamegraph/node_modules/d3-flame-graph/dist/d3-flamegraph.umd.min.js \
           jitframes/flamegraph/node_modules/d3-flame-graph/LICENSE; do
    grep -qF "$f" <<<"$listing" || fail "$whl lacks $f"
  done
  "$py" - "$whl" <<'PY' || fail "$whl: no console entry point jitframes = jitframes._cli:main"
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
ep = next(n for n in z.namelist() if n.endswith(".dist-info/entry_points.txt"))
sys.exit("jitframes = jitframes._cli:main" not in z.read(ep).decode())
PY
  echo "ok: $(basename "$whl") carries the extension, the package, the hook, the tool and the page's d3"
done
echo PASS
