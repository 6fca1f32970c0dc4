#!/usr/bin/env bash
# The wheels as scripts/python-wheels builds them (the fixture of the
# python_install_* tests), one per minor version of the interpreters given,
# each checked for what it must carry and for what PyPI and pip require:
# - the extension, the package (with its opt-in start-up hook's installer,
#   but no .pth file: nothing runs at interpreter start); the jitframes tool itself
#   as the wheel's script (.data/scripts/jitframes: an ELF executable, no
#   Python wrapper), its record script and flamegraph.py in
#   .data/data/libexec/jitframes (where the tool looks, ../libexec/jitframes),
#   the d3 files of the page in .data/data/share/jitframes;
# - the tag manylinux_2_31_x86_64, and every ELF file in the wheel holding
#   that policy (bindings/python/manylinux.py: allowed libraries, highest
#   GLIBC_ version 2.31), the check first shown to refuse an extension built
#   against this machine's newer glibc;
# - LICENSE in the dist-info, METADATA's Author, Project-URL, Python version
#   and Development Status classifiers, Requires-Python;
# - stripped binaries (no .debug_info), no build directory in any file.
# Usage: python_wheels.sh SOURCE_DIR BUILD_DIR PYTHON...
set -uo pipefail
src=$1 build=$2
shift 2
fail() { echo "FAIL: $*"; exit 1; }
JITFRAMES_FLAMEGRAPH_LIBS=$("$src/tests/support/flamegraph_libs.sh" "$build") || exit $?
export JITFRAMES_FLAMEGRAPH_LIBS CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2}
manylinux=$src/bindings/python/manylinux.py
work=$(mktemp -d "${TMPDIR:-/tmp}/jf-wheels.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The policy check can fail: an extension linked against this machine's glibc
# (newer than 2.31), in a wheel of its own, is refused.
host_ext=$(ls "$build"/bindings/python/*/jitframes/_jitframes*.so | sed -n 1p)
python3 - "$host_ext" "$work/host.whl" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[2], "w") as z:
    z.write(sys.argv[1], "jitframes/_jitframes.so")
PY
python3 "$manylinux" check "$work/host.whl" >"$work/host.log" && { cat "$work/host.log"; fail "the policy check accepts an extension linked against glibc $(ldd --version | sed -n 1p | grep -o '[0-9.]*$')"; }
grep -q "needs GLIBC_2.3[2-9] from libc.so.6" "$work/host.log" || { cat "$work/host.log"; fail "the policy check does not say which glibc symbol is too new"; }
echo "ok: the policy check refuses the host-built extension: $(grep -m1 needs "$work/host.log")"

out=$build/wheels
rm -rf "$out"
flock "$build/.python-source-build.lock" "$src/scripts/python-wheels" -o "$out" "$@" >"$build/wheels.log" 2>&1 ||
  { tail -50 "$build/wheels.log"; fail "scripts/python-wheels"; }
for py in "$@"; do
  minor=$("$py" -c 'import sys; print("%d%d" % sys.version_info[:2])')
  whl=$(ls "$out"/jitframes-*-cp"$minor"-cp"$minor"-manylinux_2_31_x86_64.whl) || fail "no cp$minor manylinux_2_31_x86_64 wheel: $(ls "$out")"
  listing=$("$py" -m zipfile -l "$whl")
  data=jitframes-[0-9.]*.data
  for f in "jitframes/_jitframes.cpython-$minor-" jitframes/__init__.py jitframes/__main__.py \
           jitframes/_built_for.py jitframes/_hook.py jitframes/_startup.py "$data/scripts/jitframes " \
           "$data/data/libexec/jitframes/jitframes-record" "$data/data/libexec/jitframes/jfrecord_target.py" \
           "$data/data/libexec/jitframes/jfrecord_inject.py" "$data/data/libexec/jitframes/jfrecord_confine.py" \
           "$data/data/libexec/jitframes/jfrecord_exit.py" \
           "$data/data/libexec/jitframes/flamegraph.py" \
           "$data/data/share/jitframes/flamegraph/node_modules/d3/dist/d3.min.js" \
           "$data/data/share/jitframes/flamegraph/node_modules/d3-flame-graph/dist/d3-flamegraph.umd.min.js" \
           "$data/data/share/jitframes/flamegraph/node_modules/d3-flame-graph/LICENSE" \
           "jitframes-[0-9.]*.dist-info/LICENSE"; do
    grep -q "^$f" <<<"$listing" || fail "$whl lacks $f"
  done
  grep -q "_tool/\|_cli.py\|entry_points.txt" <<<"$listing" && fail "$whl still has the Python wrapper of the tool"
  grep -E '^[^ ]+\.pth ' <<<"$listing" && fail "$whl installs a .pth file, which site would read at every interpreter start"
  python3 "$manylinux" check "$whl" || fail "$whl breaks manylinux_2_31_x86_64"
  "$py" - "$whl" <<'PY' || fail "$whl: see above"
import re, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
name = lambda end: next(n for n in z.namelist() if re.search(end, n))
meta = z.read(name(r"\.dist-info/METADATA$")).decode()
problems = []
for field in (r"Author: The jitframes authors", r"Project-URL: Homepage, https://",
              r"Requires-Python: <3\.14,>=3\.11", r"Classifier: Development Status :: ",
              r"Classifier: Programming Language :: Python :: 3\.11",
              r"Classifier: Programming Language :: Python :: 3\.12",
              r"Classifier: Programming Language :: Python :: 3\.13",
              r"Classifier: License :: OSI Approved :: MIT License"):
    if not re.search("(?m)^" + field, meta):
        problems.append("METADATA lacks " + field)
if b"Permission is hereby granted" not in z.read(name(r"\.dist-info/LICENSE$")):
    problems.append("the dist-info's LICENSE is not jitframes' MIT licence")
if re.search(rb"(?m)^Tag: ", z.read(name(r"\.dist-info/WHEEL$"))) is None or \
        b"manylinux_2_31_x86_64" not in z.read(name(r"\.dist-info/WHEEL$")):
    problems.append("WHEEL's Tag is not manylinux_2_31_x86_64")
tool = z.read(name(r"\.data/scripts/jitframes$"))
if tool[:4] != b"\x7fELF":
    problems.append(".data/scripts/jitframes is not the ELF tool")
if not z.getinfo(name(r"\.data/scripts/jitframes$")).external_attr >> 16 & 0o111:
    problems.append(".data/scripts/jitframes is not executable")
for n in z.namelist():
    data = z.read(n)
    for dirty in (rb"/tmp/tmp\.", rb"\.mesonpy-", rb"/jf-wheels\.", rb"/pip-"):
        if re.search(dirty, data):
            problems.append("%s holds a build path (%s)" % (n, dirty.decode()))
built_for = z.read(name(r"jitframes/_built_for\.py$")).decode()
if "/" in built_for:
    problems.append("_built_for.py names a path: " + built_for)
print("\n".join(problems))
sys.exit(1 if problems else 0)
PY
  # Stripped: no DWARF, no symbol table (readelf reads the extracted files).
  rm -rf "$work/x" && mkdir "$work/x" && (cd "$work/x" && python3 -m zipfile -e "$whl" .) || fail "unzip $whl"
  for f in "$work"/x/jitframes/_jitframes*.so "$work"/x/jitframes-*.data/scripts/jitframes; do
    sections=$(readelf -S --wide "$f" | grep -oE '\.(debug_[a-z_]+|symtab)\b' | sort -u | tr '\n' ' ')
    [ -z "$sections" ] || fail "${f#"$work/x/"} is not stripped: $sections"
  done
  echo "ok: $(basename "$whl"): the extension, the package, the hook, the tool as its script, the record scripts, the page's d3, LICENSE and metadata; every ELF file holds the policy"
done
echo PASS
