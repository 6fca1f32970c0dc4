#!/usr/bin/env bash
# The Debian packages (cpack -G DEB, cmake/Packaging.cmake; made by
# deb_build.sh in OUT/debs from the build tree OUT/tree): each one's files
# listed and checked against what it must hold, nothing more; the version
# (CHANGELOG.md's, Debian revision 1), the dependencies (-dev on the
# runtime of its version, the tools on python3, the runtime's shlibs for the
# SONAME), the ldconfig trigger in place of maintainer scripts, Multi-Arch,
# stripped binaries whose debug info is in the -dbgsym packages (by build
# id); then all three unpacked into a scratch root (dpkg -x: never the
# machine's own), where the installed consumers' checks run against them
# (install_and_consume.sh with that root: pkg-config, find_package with
# CMAKE_PREFIX_PATH, the tool and its record script), and the tool's record
# page finds the packaged d3.
# Usage: deb_packages.sh OUT SOURCE_DIR C_COMPILER
set -euo pipefail
# Reads all of its input (grep -q quits at the first match, and the writer's
# SIGPIPE would then fail the pipeline under pipefail).
grep_all() { grep "$@" >/dev/null; }
build=$1/tree debs=$1/debs src=$2 cc=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
version=$(sed -n 's/^set(CPACK_PACKAGE_VERSION "\(.*\)")$/\1/p' "$build/CPackConfig.cmake")
changelog_version=$(sed -n 's/^## \([0-9][0-9.]*\).*/\1/p' "$src/CHANGELOG.md" | sed -n 1p)
[ "$version" = "$changelog_version" ] || fail "the packages' version $version is not CHANGELOG.md's $changelog_version"
soname=libjitframes.so.${version%.*}
lib=$(sed -n 's|^libdir=${prefix}/||p' "$build/jitframes.pc")  # lib or lib/<triplet>
deb() { ls "$debs/$1"_*.deb 2>/dev/null || fail "no package $1"; }
runtime=$(deb "libjitframes${version%.*}") dev=$(deb libjitframes-dev) tools=$(deb jitframes-tools)
rt=libjitframes${version%.*}
for pkg in "$runtime" "$dev" "$tools"; do
  [ "$(dpkg-deb -f "$pkg" Version)" = "$version-1" ] || fail "$(basename "$pkg"): Version $(dpkg-deb -f "$pkg" Version), want $version-1"
done
# The tree's build type: the cache's, else CMakeLists.txt's default.
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$build/CMakeCache.txt")
build_type=${build_type:-RelWithDebInfo}
docs() { echo "usr/share/doc/$1/copyright" "usr/share/doc/$1/changelog.Debian.gz" "usr/share/lintian/overrides/$1"; }

# expect DEB FILE...: exactly these files and links (directories aside).
expect() {
  local pkg=$1; shift
  diff <(dpkg-deb -c "$pkg" | awk '$1 !~ /^d/ {print $6}' | sed 's|^\./||' | sort) \
       <(printf '%s\n' "$@" | sort) || fail "$(basename "$pkg") holds other files than expected (diff above)"
  echo "ok: $(basename "$pkg") holds exactly its ${#@} files"
}
expect "$runtime" "usr/$lib/$soname" "usr/$lib/libjitframes.so.$version" $(docs "$rt")
expect "$dev" usr/include/jitframes.h "usr/$lib/libjitframes.so" "usr/$lib/libjitframes.a" \
  "usr/$lib/pkgconfig/jitframes.pc" "usr/$lib/pkgconfig/jitframes-static.pc" \
  "usr/$lib/cmake/jitframes/jitframesConfig.cmake" "usr/$lib/cmake/jitframes/jitframesConfigVersion.cmake" \
  "usr/$lib/cmake/jitframes/jitframesTargets.cmake" \
  "usr/$lib/cmake/jitframes/jitframesTargets-$(tr 'A-Z' 'a-z' <<<"$build_type").cmake" \
  usr/share/man/man3/jitframes.3.gz $(docs libjitframes-dev)
mapfile -t d3 < <(sed 's|^|usr/share/jitframes/flamegraph/node_modules/|' "$src/tools/record/flamegraph/inlined-files.txt")
expect "$tools" usr/bin/jitframes usr/libexec/jitframes/jitframes-record usr/libexec/jitframes/flamegraph.py \
  usr/libexec/jitframes/jfrecord_target.py usr/libexec/jitframes/jfrecord_inject.py usr/libexec/jitframes/jfrecord_confine.py \
  usr/libexec/jitframes/jfrecord_exit.py \
  usr/share/man/man1/jitframes.1.gz "${d3[@]}" $(docs jitframes-tools) \
  usr/share/bash-completion/completions/jitframes usr/share/zsh/vendor-completions/_jitframes \
  usr/share/fish/vendor_completions.d/jitframes.fish

field() { dpkg-deb -f "$1" "$2"; }
[ "$(field "$dev" Depends)" = "libjitframes${version%.*} (= $version-1)" ] || fail "-dev Depends: $(field "$dev" Depends)"
field "$tools" Depends | grep_all 'python3' || fail "jitframes-tools does not depend on python3"
field "$tools" Depends | grep_all 'libjitframes' && fail "jitframes-tools depends on the shared library (it links it statically)"
field "$runtime" Depends | grep_all 'libc6' || fail "the runtime's Depends lacks libc6 (dpkg-shlibdeps)"
dpkg-deb --ctrl-tarfile "$runtime" | tar -xOf - ./shlibs | grep_all -x "libjitframes ${version%.*} libjitframes${version%.*} (>= $version-1)" ||
  fail "the runtime's shlibs: $(dpkg-deb --ctrl-tarfile "$runtime" | tar -xOf - ./shlibs)"
mkdir "$tmp/x"
dpkg-deb -x "$runtime" "$tmp/x"
[ "$(readelf -d "$tmp/x/usr/$lib/libjitframes.so.$version" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')" = "$soname" ] ||
  fail "the library's SONAME is not $soname"
echo "ok: dependencies: -dev on the runtime $version, tools on python3 not on the library; shlibs and SONAME $soname"

# The library: Multi-Arch: same, the ldconfig trigger, no maintainer script.
[ "$(field "$runtime" Multi-Arch)" = same ] || fail "the runtime's Multi-Arch: '$(field "$runtime" Multi-Arch)'"
dpkg-deb -e "$runtime" "$tmp/ctl"
[ "$(cat "$tmp/ctl/triggers" 2>/dev/null)" = "activate-noawait ldconfig" ] || fail "the runtime has no ldconfig trigger"
[ ! -e "$tmp/ctl/postinst" ] && [ ! -e "$tmp/ctl/postrm" ] || fail "the runtime has maintainer scripts: $(ls "$tmp/ctl")"
summaries=$(for p in "$runtime" "$dev" "$tools"; do field "$p" Description | sed -n 1p; done | sort -u | wc -l)
[ "$summaries" -eq 3 ] || fail "the three packages share a one-line summary"
echo "ok: the runtime: Multi-Arch: same, activate-noawait ldconfig, no postinst/postrm; 3 distinct summaries"

# Stripped, with the debug info in <package>-dbgsym under its build id.
for pair in "$runtime|usr/$lib/libjitframes.so.$version" "$tools|usr/bin/jitframes"; do
  pkg=${pair%%|*} file=${pair#*|}
  name=$(field "$pkg" Package)
  dbg=$(ls "$debs/$name-dbgsym_"*.ddeb 2>/dev/null) || fail "no $name-dbgsym package"
  rm -rf "$tmp/s" && dpkg-deb -x "$pkg" "$tmp/s" && dpkg-deb -x "$dbg" "$tmp/s"
  grep -q '\.debug_info' <<<"$(readelf -S "$tmp/s/$file")" && fail "$file is not stripped"
  id=$(readelf -n "$tmp/s/$file" | sed -n 's/.*Build ID: //p')
  # The section list read whole first: under pipefail, grep -q quitting at the
  # first match could make readelf's SIGPIPE fail the check.
  sections=$(readelf -S "$tmp/s/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" 2>/dev/null || true)
  grep -q '\.debug_info' <<<"$sections" ||
    fail "$name-dbgsym lacks the debug info of $file (build id $id)"
done
echo "ok: the library and the tool stripped, their DWARF in the -dbgsym packages by build id"

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
