#!/usr/bin/env bash
# OpenResty's LuaJIT (Debian's luajit2, the LuaJIT of Debian's nginx Lua
# module), which conflicts with Debian's luajit: its packages are downloaded
# (apt-get download) and unpacked into DIR, never installed, with its
# headers (libluajit2-5.1-dev: DIR/root/usr/include/luajit-2.1, for the
# rock's build through luarocks' LUA_INCDIR). Prints the
# directory holding its luajit executable (statically linked: it needs no
# libluajit2). Done once per DIR; tests running at once wait (flock).
# Usage: openresty_luajit.sh DIR
set -euo pipefail
dir=$1
mkdir -p "$dir"
exec 9>"$dir/.lock"
flock 9
if [ ! -x "$dir/root/usr/bin/luajit" ] || [ ! -e "$dir/root/usr/include/luajit-2.1/luajit.h" ]; then
  rm -rf "$dir/debs" "$dir/root"
  mkdir -p "$dir/debs"
  (cd "$dir/debs" && apt-get download luajit2 libluajit2-5.1-common libluajit2-5.1-dev) >&2 ||
    { echo "FAIL: apt-get download luajit2 libluajit2-5.1-common libluajit2-5.1-dev (apt-get update first?)" >&2; exit 1; }
  for deb in "$dir"/debs/*.deb; do dpkg-deb -x "$deb" "$dir/root"; done
fi
# OpenResty's branch, not Debian's luajit found by mistake: it has table.nkeys.
"$dir/root/usr/bin/luajit" -e 'require("table.nkeys") io.stderr:write(jit.version, " (OpenResty)\n")' ||
  { echo "FAIL: $dir/root/usr/bin/luajit is not OpenResty's LuaJIT" >&2; exit 1; }
echo "$dir/root/usr/bin"
