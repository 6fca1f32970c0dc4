#!/usr/bin/env bash
# The Debian packages (cpack -G DEB, cmake/Packaging.cmake) of this build:
# each one's files listed and checked against what it must hold, nothing
# more; the dependencies (-dev on the runtime of its version, the tools on
# python3, the runtime's shlibs for the SONAME); then all three unpacked into
# a scratch root (dpkg -x: never the machine's own), where the installed
# consumers' checks run against them (install_and_consume.sh with that root:
# pkg-config, find_package with CMAKE_PREFIX_PATH, the tool and its record
# script), and the tool's record page finds the packaged d3.
# Usage: deb_packages.sh BUILD_DIR SOURCE_DIR C_COMPILER
set -euo pipefail
build=$1 src=$2 cc=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# The record page's d3 files go into jitframes-tools from the build tree.
"$src/tests/support/flamegraph_libs.sh" "$build" >/dev/null
(cd "$build" && cpack -G DEB -B "$tmp/debs" >"$tmp/cpack.log" 2>&1) || { cat "$tmp/cpack.log"; fail "cpack -G DEB"; }
version=$(sed -n 's/^set(CPACK_PACKAGE_VERSION "\(.*\)")$/\1/p' "$build/CPackConfig.cmake")
soname=libjitframes.so.${version%.*}
lib=$(sed -n 's|^libdir=${prefix}/||p' "$build/jitframes.pc")  # lib or lib/<triplet>
deb() { ls "$tmp/debs/$1"_*.deb 2>/dev/null || fail "no package $1"; }
runtime=$(deb "libjitframes${version%.*}") dev=$(deb libjitframes-dev) tools=$(deb jitframes-tools)

# expect DEB FILE...: exactly these files and links (directories aside).
expect() {
  local pkg=$1; shift
  diff <(dpkg-deb -c "$pkg" | awk '$1 !~ /^d/ {print $6}' | sed 's|^\./||' | sort) \
       <(printf '%s\n' "$@" | sort) || fail "$(basename "$pkg") holds other files than expected (diff above)"
  echo "ok: $(basename "$pkg") holds exactly its ${#@} files"
}
expect "$runtime" "usr/$lib/$soname" "usr/$lib/libjitframes.so.$version"
expect "$dev" usr/include/jitframes.h "usr/$lib/libjitframes.so" "usr/$lib/libjitframes.a" \
  "usr/$lib/pkgconfig/jitframes.pc" "usr/$lib/pkgconfig/jitframes-static.pc" \
  "usr/$lib/cmake/jitframes/jitframesConfig.cmake" "usr/$lib/cmake/jitframes/jitframesConfigVersion.cmake" \
  "usr/$lib/cmake/jitframes/jitframesTargets.cmake" \
  "usr/$lib/cmake/jitframes/jitframesTargets-$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$build/CMakeCache.txt" | tr 'A-Z' 'a-z').cmake" \
  usr/share/man/man3/jitframes.3
mapfile -t d3 < <(sed 's|^|usr/share/jitframes/flamegraph/node_modules/|' "$src/tools/flamegraph/inlined-files.txt")
expect "$tools" usr/bin/jitframes usr/libexec/jitframes/jitframes-record usr/libexec/jitframes/flamegraph.py \
  usr/libexec/jitframes/jfrecord_target.py usr/libexec/jitframes/jfrecord_inject.py usr/libexec/jitframes/jfrecord_confine.py \
  usr/share/man/man1/jitframes.1 "${d3[@]}"

field() { dpkg-deb -f "$1" "$2"; }
[ "$(field "$dev" Depends)" = "libjitframes${version%.*} (= $version)" ] || fail "-dev Depends: $(field "$dev" Depends)"
field "$tools" Depends | grep -q 'python3' || fail "jitframes-tools does not depend on python3"
field "$tools" Depends | grep -q 'libjitframes' && fail "jitframes-tools depends on the shared library (it links it statically)"
field "$runtime" Depends | grep -q 'libc6' || fail "the runtime's Depends lacks libc6 (dpkg-shlibdeps)"
dpkg-deb --ctrl-tarfile "$runtime" | tar -xOf - ./shlibs | grep -qx "libjitframes ${version%.*} libjitframes${version%.*} (>= $version)" ||
  fail "the runtime's shlibs: $(dpkg-deb --ctrl-tarfile "$runtime" | tar -xOf - ./shlibs)"
mkdir "$tmp/x"
dpkg-deb -x "$runtime" "$tmp/x"
[ "$(readelf -d "$tmp/x/usr/$lib/libjitframes.so.$version" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')" = "$soname" ] ||
  fail "the library's SONAME is not $soname"
echo "ok: dependencies: -dev on the runtime $version, tools on python3 not on the library; shlibs and SONAME $soname"

root=$tmp/root
for pkg in "$runtime" "$dev" "$tools"; do dpkg-deb -x "$pkg" "$root"; done
"$src/tests/packaging/install_and_consume.sh" "$build" "$src" "$cc" "$root/usr" || fail "consumers of the unpacked packages"
# The packaged record script finds flamegraph.py and the packaged d3.
python3 - "$root/usr/libexec/jitframes/jitframes-record" "$root" <<'PY' || fail "the packaged record script does not find its page's files"
import importlib.machinery, importlib.util, os, sys
loader = importlib.machinery.SourceFileLoader("record", sys.argv[1])
spec = importlib.util.spec_from_loader("record", loader)
record = importlib.util.module_from_spec(spec)
loader.exec_module(record)
script, libs = record.flamegraph_tools(None)
print("record's page:", script, libs)
sys.exit(not (script and libs and os.path.realpath(libs).startswith(os.path.realpath(sys.argv[2]))))
PY
echo "ok: the packaged jitframes record finds flamegraph.py and d3 in the package"
echo PASS
