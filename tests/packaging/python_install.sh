#!/usr/bin/env bash
# The CPython client as a Python user installs it, for one interpreter, with
# no network: into a fresh venv from its wheel (WHEEL_DIR, built by
# scripts/python-wheels) and into another from the source tree (pip install
# --no-build-isolation ./bindings/python, Debian's meson-python). Each
# installed copy, run from outside the repository with no PYTHONPATH, passes
# the client's API tests (tests/python/test_api.py) and perf's naming test
# (perf_python.sh perfmap) with the venv's own `jitframes` command; every
# installed file is inside the venv; as installed, no .pth file is in the
# venv and an interpreter started with JITFRAMES and JITFRAMES_CONTROL set
# imports no jitframes module; after `python -m jitframes --install-hook`
# the same start imports it and a bad JITFRAMES= warns once; the
# venv's `jitframes` command is the ELF tool itself, prints its version, and
# its record verb finds its script (in the venv's libexec/jitframes). From the
# wheel also: `jitframes record PID` from the venv's bin on a program put in
# standby by the start-up hook (JITFRAMES_CONTROL=1) writes the flame graph
# page with the wheel's own d3, and `--remove-hook` then `pip uninstall`
# leave the venv as it was.
# Usage: python_install.sh PYTHON WHEEL_DIR SOURCE_DIR
set -uo pipefail
# Reads all of its input (grep -q quits at the first match, and the writer's
# SIGPIPE would then fail the pipeline under pipefail).
grep_all() { grep "$@" >/dev/null; }
python=$1 wheels=$2 src=$3
command -v perf >/dev/null && perf --version >/dev/null 2>&1 ||
  { echo "SKIP: perf is not installed (scripts/deps installs linux-perf)"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/jf-pyinstall.XXXXXX")
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
export HOME=$work/home  # perf's build-id cache and pip's, private
mkdir -p "$HOME"
unset PYTHONPATH JITFRAMES JITFRAMES_CONTROL JITFRAMES_FLAMEGRAPH_LIBS
fail() { echo "FAIL: $*"; exit 1; }
ok() { echo "ok: $*"; }
cd "$work" || exit 1
minor=$("$python" -c 'import sys; print("%d%d" % sys.version_info[:2])')
wheel=$(ls "$wheels"/jitframes-*-cp"$minor"-cp"$minor"-*.whl 2>/dev/null | sed -n 1p)
[ -n "$wheel" ] || fail "no cp$minor wheel in $wheels"

files_of() { # VENV: every file and link in it, but the bytecode caches
  find "$1" \( -type f -o -type l \) ! -path '*/__pycache__/*' | sort
}

# check_installed VENV: the installed copy, as a user runs it.
check_installed() {
  local venv=$1 py=$1/bin/python site
  site=$("$py" -c 'import jitframes, os; print(os.path.dirname(os.path.dirname(jitframes.__file__)))') ||
    fail "import jitframes from $venv"
  case $site in "$venv"/*) ;; *) fail "jitframes imported from $site, not from $venv" ;; esac
  # Every file pip installed, by its RECORD, is inside the venv.
  "$venv/bin/pip" show -f jitframes | sed -n '/^Files:/,$p' | tail -n +2 | while read -r f; do
    case $(realpath -m "$site/$f") in "$venv"/*) ;; *) echo "outside: $f" ;; esac
  done | grep . && fail "files installed outside $venv"
  for so in "$site"/jitframes/_jitframes*.so "$venv/bin/jitframes"; do
    readelf -d "$so" | grep_all 'NEEDED.*libjitframes' && fail "$so needs libjitframes.so"
  done
  ok "$venv: the extension and the tool carry the library; every file inside the venv"
  # The command is the C tool itself (no Python in between), and its record
  # verb finds its script where the wheel put it (../libexec/jitframes).
  [ "$(head -c 4 "$venv/bin/jitframes" | od -An -c | tr -d ' ')" = '177ELF' ] ||
    fail "$venv/bin/jitframes is not the ELF tool: $(head -c 60 "$venv/bin/jitframes")"
  "$venv/bin/jitframes" --version | grep_all "^jitframes [0-9]" || fail "$venv/bin/jitframes --version"
  "$venv/bin/jitframes" record --help >"$work/record-help.log" 2>&1 && grep -q "usage: jitframes record" "$work/record-help.log" ||
    { cat "$work/record-help.log"; fail "$venv/bin/jitframes record does not find its script"; }
  ok "$venv/bin/jitframes is the ELF tool; --version, and record finds its script"
  JITFRAMES_TOOL=$venv/bin/jitframes "$py" "$src/tests/python/test_api.py" >"$work/api.log" 2>&1 ||
    { cat "$work/api.log"; fail "test_api.py against $venv"; }
  tail -3 "$work/api.log"
  JITFRAMES_TOOL=$venv/bin/jitframes bash "$src/tests/python/perf_python.sh" "$py" perfmap \
    >"$work/perf.log" 2>&1 || { cat "$work/perf.log"; fail "perf_python.sh perfmap against $venv"; }
  grep "^ok: perf names" "$work/perf.log"
  "$venv/bin/pip" show -f jitframes | grep '\.pth$' && fail "$venv: the install put the .pth files above in the venv"
  imported=$(JITFRAMES=perfmap JITFRAMES_CONTROL=1 "$py" -c 'import sys; print("jitframes" in sys.modules)')
  [ "$imported" = False ] || fail "$venv: without the hook, JITFRAMES set, a jitframes module is imported at start-up"
  ok "$venv: as installed, no .pth file and nothing of jitframes imported at start-up, JITFRAMES set"
  "$py" -m jitframes --install-hook >"$work/hook.log" || { cat "$work/hook.log"; fail "$venv: --install-hook"; }
  grep -q "^jitframes: start-up hook on: $site/jitframes.pth: .*instructions" "$work/hook.log" ||
    { cat "$work/hook.log"; fail "$venv: --install-hook says"; }
  JITFRAMES=nope "$py" -c pass 2>"$work/warn.log" || fail "JITFRAMES=nope stopped the program"
  [ "$(grep -c 'not activated from JITFRAMES=nope' "$work/warn.log")" = 1 ] ||
    { cat "$work/warn.log"; fail "JITFRAMES=nope: not one warning"; }
  ok "$venv: python -m jitframes --install-hook: $(cat "$work/hook.log"); the start-up hook warns once"
}

# record_standby VENV: `jitframes record` from the venv's bin.
record_standby() {
  local venv=$1
  cat >"$work/prog.py" <<'PY'
import os, time
import jitframes
print("ready", os.getpid(), jitframes.is_active(), flush=True)
def hot_python_function(n):
    return sum(i * i for i in range(n))
end = time.monotonic() + 120
while time.monotonic() < end:
    hot_python_function(20000)
PY
  JITFRAMES_CONTROL=1 JITFRAMES_DIR=$work "$venv/bin/python" "$work/prog.py" >"$work/prog.out" 2>&1 &
  pid=$!
  for _ in $(seq 400); do grep -q "^ready" "$work/prog.out" && break; sleep 0.05; done
  grep -q "^ready $pid False" "$work/prog.out" || { cat "$work/prog.out"; fail "the program did not start in standby"; }
  # In standby it has written nothing: a map named for its pid now is an
  # earlier process's (a busy /tmp holds hundreds).
  rm -f "/tmp/perf-$pid.map"
  "$venv/bin/jitframes" status "$pid" >/dev/null || fail "no control channel from JITFRAMES_CONTROL=1 in the venv"
  "$venv/bin/jitframes" record "$pid" --via channel --duration 2 -o "$work/rec" >"$work/record.log" 2>&1 ||
    { cat "$work/record.log"; fail "$venv/bin/jitframes record"; }
  grep -q '"py::hot_python_function' "$work/rec/flamegraph.html" ||
    fail "the flame graph does not name py::hot_python_function"
  grep -q 'd3-flame-graph' "$work/rec/flamegraph.html" || fail "the page does not inline d3-flame-graph"
  [ -e "/tmp/perf-$pid.map" ] && fail "the recording left /tmp/perf-$pid.map"
  kill "$pid"; wait "$pid" 2>/dev/null; pid=""
  ok "$venv/bin/jitframes record: the page names py::hot_python_function, with the wheel's d3"
}

# From the wheel.
"$python" -m venv "$work/wheel" || fail "venv"
files_of "$work/wheel" >"$work/before"
"$work/wheel/bin/pip" install --quiet --no-index --no-cache-dir "$wheel" || fail "pip install $wheel"
check_installed "$work/wheel"
record_standby "$work/wheel"
"$work/wheel/bin/python" -m jitframes --remove-hook >"$work/hook.log" || { cat "$work/hook.log"; fail "--remove-hook"; }
"$work/wheel/bin/pip" uninstall --quiet --yes jitframes || fail "pip uninstall"
files_of "$work/wheel" >"$work/after"
diff "$work/before" "$work/after" || fail "pip uninstall left the files above"
ok "python -m jitframes --remove-hook, pip uninstall jitframes: the venv as it was"

# From the source tree, offline: Debian's meson-python for any interpreter.
# One build at a time: meson-python 0.12 names the interpreter in a file of
# the source tree (.mesonpy-native-file.ini), which builds at once overwrite
# (every test building from bindings/python takes BUILD_DIR/.python-source-build.lock).
backend=$("$src/scripts/python-wheels" --backend-path) || fail "no meson-python"
"$python" -m venv "$work/source" || fail "venv"
PYTHONPATH=$backend flock "$wheels/../.python-source-build.lock" "$work/source/bin/pip" install --quiet \
  --no-index --no-cache-dir --no-build-isolation "$src/bindings/python" >"$work/source.log" 2>&1 ||
  { cat "$work/source.log"; fail "pip install $src/bindings/python"; }
check_installed "$work/source"
echo PASS
