# For the `jitframes record` tests (sourced, with $build set): skips (77)
# without perf, points the tool at the flame graph's d3 libraries, and makes
# $work, a fresh directory holding a private HOME, removed on exit with the
# processes listed in $pids and after the commands in $on_exit; fail MESSAGE. Its ~/.debug (perf's build-id cache) holds one entry, and
# debug_cache_unchanged NAME fails unless record left it exactly so.
# record_cpu OUT CPU_MS ARGS... records $pid for CPU_MS ms of its CPU time.
command -v perf >/dev/null && perf --version >/dev/null 2>&1 || { echo "SKIP: perf is not installed"; exit 77; }
JITFRAMES_FLAMEGRAPH_LIBS=$("$(dirname "${BASH_SOURCE[0]}")/flamegraph_libs.sh" "$build") || exit $?
export JITFRAMES_FLAMEGRAPH_LIBS
work=$(mktemp -d "${TMPDIR:-/tmp}/jf-record.XXXXXX")
export HOME=$work/home
mkdir -p "$HOME"
mkdir -p "$HOME/.debug/.build-id/00" && echo kept >"$HOME/.debug/.build-id/00/entry"
debug_cache_before=$(find "$HOME/.debug" | sort)
debug_cache_unchanged() {
  local now; now=$(find "$HOME/.debug" | sort)
  [ "$now" = "$debug_cache_before" ] || { echo "FAIL: $1: ~/.debug went from $(echo "$debug_cache_before" | wc -l) to $(echo "$now" | wc -l) entries: $(diff <(echo "$debug_cache_before") <(echo "$now") | head -5)"; exit 1; }
}
pids=() on_exit=:
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; eval "$on_exit"; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# record_cpu OUT CPU_MS ARGS...: `${record_tool[@]} record $pid -o OUT --duration
# 100 ARGS...` (record_tool: the command, ($tool) unless the test sets it) until the
# program has run CPU_MS ms of CPU time once perf started (perf samples the
# process's CPU time: at 999 Hz, about one sample per ms, however busy the
# machine), then ended with Ctrl-C (SIGINT) as a user would; the log in
# OUT.log. Fails if record still runs 120 s after the SIGINT.
# (A command, not a shell function: SIGINT must reach the tool itself, and a
# background subshell ignores it.)
[ -n "${record_tool+set}" ] || record_tool=("${tool:-}")
. "$(dirname "${BASH_SOURCE[0]}")/cpu_time.sh"
record_cpu() {
  local out=$1 want=$2; shift 2
  local rec
  "${record_tool[@]}" record "$pid" --duration 100 -o "$out" "$@" >"$out.log" 2>&1 &
  rec=$!
  while kill -0 "$rec" 2>/dev/null && [ ! -e "$out/perf.data" ]; do sleep 0.05; done
  interrupt_after_cpu "$pid" "$want" "$rec"
  for _ in $(seq 1200); do kill -0 "$rec" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$rec" 2>/dev/null && { echo "record still runs 120 s after SIGINT" >>"$out.log"; return 1; }
  wait "$rec"
}
. "$(dirname "${BASH_SOURCE[0]}")/stale_files.sh"
