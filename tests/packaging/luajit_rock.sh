#!/usr/bin/env bash
# The LuaJIT rock as a rocks server and its users would take it, offline:
#  - the rockspec: named for CHANGELOG.md's version, its source the tagged
#    release (the project's Homepage + /archive/vX.Y.Z.tar.gz, the CMake
#    project's HOMEPAGE_URL), a homepage and a test section;
#  - the release tarball made as documented (scripts/release-tarball), the
#    rockspec's source pointed at it (a file:// URL): `luarocks pack` makes a
#    .src.rock, and `luarocks install` of that rock into a private tree, with
#    Debian's LuaJIT headers through LUA_INCDIR, installs the module only,
#    which names traces under luajit;
#  - in the unpacked tarball, `luarocks make` with OpenResty's LuaJIT (unpacked
#    privately, tests/luajit/openresty_luajit.sh) through LUA_INCDIR, $(CFLAGS)
#    given on the command line and no pkg-config luajit to be found: the
#    module is built with those headers and flags, and `luarocks test` runs
#    the module's API test under OpenResty's luajit;
#  - LUA_INCDIR without LuaJIT's headers: luarocks stops first, naming
#    luajit.h, before anything is compiled.
# Usage: luajit_rock.sh SOURCE_DIR OPENRESTY_DIR
set -uo pipefail
src=$1 ordir=$2
command -v luarocks >/dev/null || { echo "FAIL: luarocks is not installed (scripts/deps installs it)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -f /tmp/perf-$(cat "$tmp/pid" 2>/dev/null).map; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
rocks() { local tree=$1; shift; luarocks --lua-version 5.1 --tree "$tree" "$@"; }

version=$(sed -n 's/^## \([0-9][0-9.]*\).*/\1/p' "$src/CHANGELOG.md" | sed -n 1p)
spec=$src/bindings/luajit/jitframes-$version-1.rockspec
[ -e "$spec" ] || fail "no rockspec for CHANGELOG.md's version $version: $(ls "$src"/bindings/luajit/*.rockspec)"
homepage=$(sed -n 's/.*HOMEPAGE_URL \(https:[^ )]*\).*/\1/p' "$src/CMakeLists.txt")
field() { sed -n "s|^   $1 = \"\\(.*\\)\",\$|\\1|p" "$spec"; }
[ "$(field url)" = "$homepage/archive/v$version.tar.gz" ] || fail "source.url $(field url), want $homepage/archive/v$version.tar.gz"
[ "$(field dir)" = "jitframes-$version" ] || fail "source.dir $(field dir)"
[ "$(field homepage)" = "$homepage" ] || fail "homepage $(field homepage), want $homepage"
grep -q '^test = {' "$spec" || fail "the rockspec has no test section"
luarocks --lua-version 5.1 lint "$spec" || fail "luarocks lint $spec"
echo "ok: rockspec $version (luarocks lint): source $(field url), homepage, test section"

tarball=$("$src/scripts/release-tarball" HEAD "$tmp/dist") || fail "scripts/release-tarball"
[ "$(tar -tzf "$tarball" | sed -n 1p)" = "jitframes-$version/" ] || fail "the tarball's paths are not under jitframes-$version/"
mkdir "$tmp/pack"
sed "s|^   url = \".*\",\$|   url = \"file://$tarball\",|" "$spec" >"$tmp/pack/${spec##*/}"
(cd "$tmp/pack" && luarocks --lua-version 5.1 pack "${spec##*/}") >"$tmp/pack.log" 2>&1 ||
  { cat "$tmp/pack.log"; fail "luarocks pack"; }
srcrock=$tmp/pack/jitframes-$version-1.src.rock
[ -s "$srcrock" ] || fail "luarocks pack made no $srcrock: $(cat "$tmp/pack.log")"
echo "ok: luarocks pack made $(basename "$srcrock") ($(wc -c <"$srcrock") bytes) from the release tarball"

incdir=$(pkg-config --cflags-only-I luajit | sed 's/^-I//; s/ *$//')
rocks "$tmp/t1" install "$srcrock" LUA_INCDIR="$incdir" >"$tmp/install.log" 2>&1 ||
  { tail -30 "$tmp/install.log"; fail "luarocks install of the packed rock"; }
installed=$(cd "$tmp/t1" && find . -type f ! -path './lib/luarocks/*' | sort)
[ "$installed" = ./lib/lua/5.1/jitframes.so ] || fail "luarocks install installed: $installed"
PIDFILE=$tmp/pid JITFRAMES=perfmap LUA_CPATH="$tmp/t1/lib/lua/5.1/?.so" luajit -l jitframes -e '
  io.open(os.getenv("PIDFILE"), "w"):write(io.open("/proc/self/stat"):read("*n"))
  local s = 0 for i = 1, 100000 do s = s + i end' || fail "luajit -l jitframes from the installed rock"
grep -qE '^[0-9a-f]+ [0-9a-f]+ TRACE_[0-9]+::' "/tmp/perf-$(cat "$tmp/pid").map" || fail "the installed rock named no trace"
echo "ok: luarocks install of the packed rock: the module only, naming traces under luajit"

orbin=$("$src/tests/luajit/openresty_luajit.sh" "$ordir") || fail "OpenResty's LuaJIT"
orinc=$ordir/root/usr/include/luajit-2.1
tar -C "$tmp" -xzf "$tarball"
top=$tmp/jitframes-$version
mkdir "$tmp/nopc"
(cd "$top" && PKG_CONFIG_LIBDIR=$tmp/nopc PKG_CONFIG_PATH=$tmp/nopc \
   rocks "$tmp/t2" make "bindings/luajit/${spec##*/}" LUA_INCDIR="$orinc" CFLAGS="-O2 -fPIC -DJITFRAMES_ROCK_CFLAGS") \
  >"$tmp/or.log" 2>&1 || { tail -30 "$tmp/or.log"; fail "luarocks make with OpenResty's headers"; }
cache=$top/build.luarocks/CMakeCache.txt
grep -qx "JITFRAMES_LUA_INCDIR:PATH=$orinc" "$cache" || fail "the build did not take LUA_INCDIR: $(grep JITFRAMES_LUA_INCDIR "$cache")"
grep -q -- "-DJITFRAMES_ROCK_CFLAGS" "$top/build.luarocks/bindings/luajit/CMakeFiles/jitframes_luajit.dir/flags.make" ||
  fail "the module was not compiled with luarocks' CFLAGS"
grep -q -- "-I$orinc\|-isystem $orinc" "$top/build.luarocks/bindings/luajit/CMakeFiles/jitframes_luajit.dir/flags.make" ||
  fail "the module was not compiled with OpenResty's headers"
(cd "$top" && LUAJIT=$orbin/luajit luarocks --lua-version 5.1 test "bindings/luajit/${spec##*/}") >"$tmp/test.log" 2>&1 ||
  { tail -30 "$tmp/test.log"; fail "luarocks test under OpenResty's luajit"; }
grep -q '^PASS' "$tmp/test.log" || fail "luarocks test: $(tail -5 "$tmp/test.log")"
"$orbin/luajit" -e 'require("table.nkeys")' || fail "$orbin/luajit is not OpenResty's"
echo "ok: luarocks make with OpenResty's LuaJIT through LUA_INCDIR and CFLAGS (no pkg-config luajit); luarocks test passes under its luajit"

mkdir "$tmp/empty"
(cd "$top" && rocks "$tmp/t3" make "bindings/luajit/${spec##*/}" LUA_INCDIR="$tmp/empty") >"$tmp/missing.log" 2>&1 &&
  fail "luarocks make succeeded without LuaJIT's headers"
grep -q 'Could not find header file for LUA' "$tmp/missing.log" && grep -q 'luajit.h' "$tmp/missing.log" ||
  fail "no clear message without LuaJIT's headers: $(tail -5 "$tmp/missing.log")"
grep -q 'Building C object' "$tmp/missing.log" && fail "the C library was built before the headers were found missing"
echo "ok: without LuaJIT's headers luarocks stops first: $(grep -m1 'No file' "$tmp/missing.log")"
echo PASS
