#!/usr/bin/env bash
# jitframes-tools as installed from its package writes a flame graph page:
# the three packages unpacked into a scratch root (dpkg -x), `jitframes
# record` of that root (no JITFRAMES_FLAMEGRAPH_LIBS: the packaged d3 files)
# on minijit, which publishes its code in memory: exit 0, a flamegraph.html
# holding d3 and d3-flame-graph and the JIT's names. Then, with the d3
# directories emptied (as the package once shipped them), record exits 1,
# says why, and leaves no flamegraph.html.
# Usage: deb_record.sh DEBS_DIR MINIJIT BUILD_DIR
set -uo pipefail
# Reads all of its input (grep -q quits at the first match, and the writer's
# SIGPIPE would then fail the pipeline under pipefail).
grep_all() { grep "$@" >/dev/null; }
debs=$(realpath "$1") minijit=$(realpath "$2") build=$3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../support/record_env.sh"
unset JITFRAMES_FLAMEGRAPH_LIBS
root=$work/root
for deb in "$debs"/libjitframes[0-9]*_*.deb "$debs"/libjitframes-dev_*.deb "$debs"/jitframes-tools_*.deb; do
  dpkg-deb -x "$deb" "$root" || fail "dpkg-deb -x $deb"
done
tool=$root/usr/bin/jitframes
record_tool=("$tool")
plain=(env)
for v in $(env | sed -n 's/^\(JITFRAMES[A-Za-z0-9_]*\)=.*/\1/p'); do plain+=(-u "$v"); done
"${plain[@]}" "$minijit" --seconds 300 >"$work/mj.out" 2>&1 &
pid=$!; pids+=("$pid")
for _ in $(seq 400); do "$tool" regions "$pid" 2>/dev/null | grep_all '^4 live regions' && break; sleep 0.05; done

record_cpu "$work/good" 1000; rc=$?
cat "$work/good.log"
[ "$rc" -eq 0 ] || fail "the packaged jitframes record exited $rc"
page=$work/good/flamegraph.html
[ -s "$page" ] || fail "no flamegraph.html, or an empty one"
grep -q 'https://d3js.org v' "$page" || fail "flamegraph.html lacks d3"
grep -q 'flamegraph' "$page" && grep -q 'd3-flame-graph' "$page" || fail "flamegraph.html lacks d3-flame-graph"
grep -q 'mj_framed' "$page" || fail "flamegraph.html names no minijit function (mj_...)"
echo "ok: the packaged record wrote a $(wc -c <"$page")-byte flamegraph.html with d3, d3-flame-graph and minijit's names"

find "$root/usr/share/jitframes/flamegraph/node_modules" -type f -delete
record_cpu "$work/bad" 300; rc=$?
cat "$work/bad.log"
[ "$rc" -ne 0 ] || fail "record exited 0 without writing its flame graph page"
[ ! -e "$work/bad/flamegraph.html" ] || fail "record left a $(wc -c <"$work/bad/flamegraph.html")-byte flamegraph.html"
grep -q '^jitframes record: no flame graph page: ' "$work/bad.log" || fail "record did not say why there is no page"
grep -q 'Traceback' "$work/bad.log" && fail "record ended in a traceback"
echo "ok: without its d3 files, record says why, leaves no page and exits $rc"
echo PASS
