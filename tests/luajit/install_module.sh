#!/usr/bin/env bash
# The LuaJIT module as users install it: `cmake --install --component luajit`
# into a prefix puts jitframes.so in <prefix>/lib/lua/5.1, from where the
# stock luajit loads it and names its traces in the perf map.
# Usage: install_module.sh BUILD_DIR
set -euo pipefail
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; rm -f "/tmp/perf-$(cat "$tmp/pid" 2>/dev/null).map"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cmake --install "$build" --prefix "$tmp/prefix" --component luajit >/dev/null
module=$tmp/prefix/lib/lua/5.1/jitframes.so
[ -f "$module" ] || fail "no $module after the install: $(find "$tmp/prefix" -type f)"
echo "ok: installed $module"
PIDFILE=$tmp/pid LUA_CPATH="$tmp/prefix/lib/lua/5.1/?.so" JITFRAMES=perfmap luajit -l jitframes -e '
  io.open(os.getenv("PIDFILE"), "w"):write(io.open("/proc/self/stat"):read("*n"))
  local s = 0 for i = 1, 100000 do s = s + i end' || fail "luajit -l jitframes"
grep -qE '^[0-9a-f]+ [0-9a-f]+ TRACE_[0-9]+::' "/tmp/perf-$(cat "$tmp/pid").map" ||
  fail "the installed module named no trace"
echo "ok: the installed module, loaded by luajit -l jitframes, names its traces"
echo PASS
