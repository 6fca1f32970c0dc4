#!/usr/bin/env bash
# perf on a Python program under the CPython client: perf itself names the
# Python functions (py::<qualname>:<file>) in its call chains.
#   MODE perfmap  activate("perfmap"), perf record --call-graph dwarf: the
#                 innermost Python function of each chain is named (perf has
#                 no unwind info for a perf map region, so chains end there)
#   MODE jitdump  activate("jitdump"), perf record -k 1 --call-graph dwarf,
#                 perf inject --jit: whole chains py::foo under py::bar under
#                 py::baz, each with its file:first line; every dump passes
#                 `jitframes check`
# Frame-pointer chains (perf record -g) are not used: Debian's and pyenv's
# CPython are built without frame pointers, so such chains break inside
# _PyEval_EvalFrameDefault whatever the trampolines do.
# Negative control: the same program without activation shows no py:: name.
# Usage: perf_python.sh PYTHON MODE   (PYTHONPATH and JITFRAMES_TOOL from ctest)
set -u
python=$1 mode=$2
here=$(cd "$(dirname "$0")" && pwd)
tool=${JITFRAMES_TOOL:-}
. "$here/../support/perf_test_env.sh"
require_perf

cat >"$tmp/work.py" <<'PY'
import sys
import jitframes

def foo(n):
    x = 0
    for i in range(n):
        x += i * i
    return x

def bar(n):
    return foo(n)

def baz(n):
    return bar(n)

if sys.argv[1] != "none":
    jitframes.activate(sys.argv[1])
for _ in range(60):
    baz(100000)
PY

record_args=(-e cpu-clock --call-graph dwarf)
[ "$mode" = jitdump ] && record_args=(-k 1 "${record_args[@]}")

# record NAME SINKS: perf record the program into $tmp/NAME; writes
# $tmp/NAME/script (perf script -F ip,sym,srcline of the file perf reads).
record() {
  local name=$1 sinks=$2 dir=$tmp/$1
  mkdir "$dir"
  (cd "$dir" && JITFRAMES_DIR=$dir timeout 300 perf record -q "${record_args[@]}" -o perf.data -- \
     "$here/../support/exec_with_fresh_map.sh" pid "$python" "$tmp/work.py" "$sinks" >out 2>err) ||
    die "perf record ($name) failed: $(cat "$dir/err")"
  pids+=("$(cat "$dir/pid")")
  local data=$dir/perf.data
  if [ "$sinks" = jitdump ]; then
    local dump
    dump=$(ls "$dir"/jit-*.dump 2>/dev/null | head -1)
    [ -n "$dump" ] || die "no jitdump in $dir"
    if [ -n "$tool" ]; then
      "$tool" check "$dump" >"$dir/check" 2>&1 || die "jitframes check: $(cat "$dir/check")"
      echo "ok: jitframes check: $(cat "$dir/check")"
    else
      echo "note: the jitframes tool is not built; the dump is not checked"
    fi
    timeout 300 perf inject --jit -i "$data" -o "$dir/perf.jit.data" >"$dir/inject" 2>&1 ||
      die "perf inject: $(cat "$dir/inject")"
    data=$dir/perf.jit.data
  fi
  timeout 300 "$perf" script -i "$data" -F ip,sym,srcline >"$dir/script" 2>"$dir/script.err" ||
    die "perf script ($name): $(tail -3 "$dir/script.err")"
}

record with "$mode"
record without none
grep -q 'py::' "$tmp/without/script" && die "negative control: py:: names without the client"
echo "ok: no py:: name without the client"

"$python" - "$tmp/with/script" "$tmp/work.py" "$mode" <<'PY' || exit 1
import re, sys
script, work, mode = sys.argv[1:]
first_line = {"foo": 4, "bar": 10, "baz": 13}
samples = open(script).read().split("\n\n")
def frames(sample):
    """[(symbol, srcline or '')] innermost first."""
    out = []
    for line in sample.splitlines():
        m = re.match(r"\s+[0-9a-f]+ (.+)$", line)
        if m:
            out.append([m.group(1).strip(), ""])
        elif out and line.strip():
            out[-1][1] = line.strip()
    return out
named = [f for s in samples for f in frames(s) if f[0].startswith("py::")]
print("samples: %d, Python frames named: %d" % (len(samples), len(named)))
if not any(f[0] == "py::foo:%s" % work for f in named):
    sys.exit("FAIL: perf names no py::foo:%s" % work)
print("ok: perf names py::foo:%s" % work)
if mode != "jitdump":
    sys.exit(0)
chains = 0
for s in samples:
    py = [f for f in frames(s) if f[0].startswith("py::") and f[0].endswith(":" + work)]
    names = [f[0].split(":")[2] for f in py]
    if names[:3] == ["foo", "bar", "baz"]:
        chains += 1
        for (sym, src), fn in zip(py, names):
            want = "work.py:%d" % first_line[fn]
            if src != want:
                sys.exit("FAIL: %s has source line %r, expected %s" % (sym, src, want))
print("chains py::foo <- py::bar <- py::baz with file:line: %d" % chains)
if chains < 10:
    sys.exit("FAIL: fewer than 10 whole chains")
print("ok: whole chains, every Python frame with its file:line")
PY
echo PASS
