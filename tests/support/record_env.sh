# For the `jitframes record` tests (sourced, with $build set): skips (77)
# without perf, points the tool at the flame graph's d3 libraries, and makes
# $work, a fresh directory holding a private HOME (perf's build-id cache)
# that the caller's EXIT trap removes.
command -v perf >/dev/null && perf --version >/dev/null 2>&1 || { echo "SKIP: perf is not installed"; exit 77; }
JITFRAMES_FLAMEGRAPH_LIBS=$("$(dirname "${BASH_SOURCE[0]}")/flamegraph_libs.sh" "$build") || exit $?
export JITFRAMES_FLAMEGRAPH_LIBS
work=$(mktemp -d "${TMPDIR:-/tmp}/jf-record.XXXXXX")
export HOME=$work/home
mkdir -p "$HOME"
