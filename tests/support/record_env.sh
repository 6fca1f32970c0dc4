# For the `jitframes record` tests (sourced, with $build set): skips (77)
# without perf, points the tool at the flame graph's d3 libraries, and makes
# $work, a fresh directory holding a private HOME, removed on exit with the
# processes listed in $pids and after the commands in $on_exit; fail MESSAGE. Its ~/.debug (perf's build-id cache) holds one entry, and
# debug_cache_unchanged NAME fails unless record left it exactly so.
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
