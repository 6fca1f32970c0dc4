# Sourced by the tests that drive perf on a recorded program:
#   . "$here/../support/perf_test_env.sh"
# Gives a private work directory $tmp (removed at exit) with perf's HOME in it
# (so ~/.debug stays private), $perf (perf with SIGPIPE ignored, see
# perf_ignoring_sigpipe.sh), an array `pids` whose /tmp/perf-<pid>.map are
# removed at exit, die(), and require_perf (exit 77 when perf is absent).
support_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
perf=$support_dir/perf_ignoring_sigpipe.sh
tmp=$(mktemp -d)
export HOME=$tmp/home
mkdir -p "$HOME"
pids=()
cleanup() {
  for p in "${pids[@]}"; do rm -f "/tmp/perf-$p.map"; done
  rm -rf "$tmp"
}
trap cleanup EXIT
die() { echo "FAIL: $*"; exit 1; }
require_perf() {
  if ! command -v perf >/dev/null || ! perf --version >/dev/null 2>&1; then
    echo "SKIP: perf is not installed (scripts/deps installs linux-perf)"; exit 77
  fi
}
