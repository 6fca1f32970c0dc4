#!/usr/bin/env bash
# The LuaJIT module as a Lua developer installs it: `luarocks make` of
# bindings/luajit's rockspec (Debian's luarocks), run in a copy of the
# sources, installs into a tree only the module, TREE/lib/lua/5.1/jitframes.so;
# after `eval $(luarocks path)`, `luajit -l jitframes` finds it there and
# names its traces in the perf map; `luarocks remove` takes it away again.
# Usage: luarocks_make.sh SOURCE_DIR
set -euo pipefail
src=$1
command -v luarocks >/dev/null || { echo "FAIL: luarocks is not installed (scripts/deps installs it)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -f "/tmp/perf-$(cat "$tmp/pid" 2>/dev/null).map"; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
tar -C "$src" --exclude=./build --exclude='./build-*' --exclude=./.git --exclude=./build.luarocks \
  --exclude='./dist' -cf - . | (mkdir "$tmp/src" && tar -C "$tmp/src" -xf -)
rocks() { luarocks --lua-version 5.1 --tree "$tmp/tree" "$@"; }
# LuaJIT's headers through luarocks' LUA_INCDIR (Debian's luarocks is set up
# for PUC Lua 5.1), as docs/luajit.md says.
incdir=$(pkg-config --cflags-only-I luajit | sed 's/^-I//; s/ *$//')
(cd "$tmp/src" && rocks make bindings/luajit/jitframes-*.rockspec LUA_INCDIR="$incdir") >"$tmp/make.log" 2>&1 ||
  { cat "$tmp/make.log"; fail "luarocks make"; }
installed=$(cd "$tmp/tree" && find . -type f ! -path './lib/luarocks/*' | sort)
[ "$installed" = ./lib/lua/5.1/jitframes.so ] || fail "luarocks make installed: $installed"
echo "ok: luarocks make installed the module only: $installed"
eval "$(rocks path)"
PIDFILE=$tmp/pid JITFRAMES=perfmap luajit -l jitframes -e '
  io.open(os.getenv("PIDFILE"), "w"):write(io.open("/proc/self/stat"):read("*n"))
  local s = 0 for i = 1, 100000 do s = s + i end' || fail "luajit -l jitframes with luarocks path"
grep -qE '^[0-9a-f]+ [0-9a-f]+ TRACE_[0-9]+::' "/tmp/perf-$(cat "$tmp/pid").map" ||
  fail "the rock's module named no trace"
echo "ok: luajit -l jitframes finds the rock through luarocks path and names its traces"
rocks remove jitframes >/dev/null || fail "luarocks remove"
left=$(cd "$tmp/tree" && find . -type f ! -path './lib/luarocks/*')
[ -z "$left" ] || fail "luarocks remove left: $left"
echo "ok: luarocks remove leaves nothing"
echo PASS
