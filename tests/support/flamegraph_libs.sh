#!/usr/bin/env bash
# Print the node_modules holding d3 and d3-flame-graph for flame graph pages,
# installing them first (npm ci from tools/record/flamegraph's lock file) into
# BUILD/flamegraph, where scripts/demo and `jitframes record` look too. Tests
# running at once wait for each other (flock). Exit 77 without npm.
# Usage: flamegraph_libs.sh BUILD_DIR
set -euo pipefail
build=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$build/flamegraph
mkdir -p "$dir"
exec 9>"$dir/.lock"
flock 9
if [ ! -d "$dir/node_modules/d3-flame-graph" ]; then
  command -v npm >/dev/null || { echo "SKIP: npm is not installed (scripts/deps installs it)" >&2; exit 77; }
  cp "$root/tools/record/flamegraph/package.json" "$root/tools/record/flamegraph/package-lock.json" "$dir/"
  (cd "$dir" && npm ci --no-audit --no-fund --silent) >&2
fi
echo "$dir/node_modules"
