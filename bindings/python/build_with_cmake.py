"""Build the wheel's native parts with the project's CMake (run by meson.build).

  build_with_cmake.py --source REPO --build DIR --python PYTHON --out DIR
      configures REPO for PYTHON only (no tests, examples, benchmarks or
      LuaJIT module; warnings not errors: a user's compiler may warn more),
      builds it, and puts into --out the extension (libjitframes compiled
      in), the jitframes tool and its record script (executable: the wheel
      keeps the mode of the file it is given) with flamegraph.py.
      $JITFRAMES_CMAKE_BUILD_DIR, when set, is the CMake build directory
      instead of --build: builds for several interpreters then share the
      library's and the tool's objects (scripts/python-wheels, the tests).
      For a wheel every system can install (scripts/python-wheels):
      $JITFRAMES_WHEEL_SYSROOT, a sysroot holding an older C library
      (scripts/python-sysroot --manylinux), is what the extension is compiled
      and linked against; $JITFRAMES_TOOL_CC (musl-gcc) builds the tool
      statically in a CMake tree of its own, so it needs no C library at all.
      Both are stripped, and the build and source directories are mapped
      away (-ffile-prefix-map): two builds of one commit give the same bytes.
  build_with_cmake.py --flamegraph-libs REPO DIR
      prints "file|path under node_modules" for each d3 file the record's
      flame graph page inlines (npm run in DIR if need be), or nothing.
  build_with_cmake.py --dist REPO
      run by `meson dist` (meson-python's sdist): copies into
      $MESON_DIST_ROOT/jitframes-src/ the files of REPO the C build needs
      (git's list: the CMake project, include/, src/, tools/, docs/ and
      bindings/python's C parts), and LICENSE over its symlink, so the sdist
      builds offline from itself.
  build_with_cmake.py --print-info REPO
      prints include/jitframes.h's version, then this interpreter's extension
      suffix and its platlib relative to its base prefix (where meson-python
      installs), a line each.

The d3 files come from $JITFRAMES_FLAMEGRAPH_LIBS, REPO/tools/record/flamegraph/
node_modules, or `npm ci --prefer-offline` (npm's cache serves it offline);
without any, the wheel is built without them (meson.build warns) and
`jitframes record` says it cannot write the page.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import sysconfig

def flamegraph_files(repo):
    """What flamegraph.py reads from node_modules, with the licences."""
    with open(os.path.join(repo, "tools", "record", "flamegraph", "inlined-files.txt")) as f:
        return f.read().split()


def header_version(repo):
    text = open(os.path.join(repo, "include", "jitframes.h")).read()
    parts = [re.search(r"#define JF_VERSION_%s (\d+)" % p, text).group(1)
             for p in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(parts)


def run(cmd):
    print("+ " + " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)


# The directories a build may leave in its output (__FILE__, DWARF before
# strip, hence the build-id): mapped to fixed names. gcc tries the last map
# first: the build directory's, which may be inside the sources.
def prefix_map_flags(repo, build_dir):
    return "-ffile-prefix-map=%s=/jitframes/src -ffile-prefix-map=%s=/jitframes/build" % (repo, build_dir)


def configure(repo, build_dir, python, extra):
    run(["cmake", "-S", repo, "-B", build_dir, "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
         "-DJITFRAMES_BUILD_TESTS=OFF", "-DJITFRAMES_BUILD_EXAMPLES=OFF",
         "-DJITFRAMES_BUILD_BENCH=OFF", "-DJITFRAMES_BUILD_LUAJIT=OFF", "-DJITFRAMES_WERROR=OFF",
         "-DJITFRAMES_PYTHON_INTERPRETERS=" + python] + extra)


def sysroot_flags(sysroot):
    """CMake settings for compiling and linking against SYSROOT's C library.
    gcc searches its own library directories (/usr/lib/<triple>) even with
    --sysroot: the sysroot's come first with -L. Before glibc 2.34 the dl*
    functions are in libdl."""
    libs = " ".join("-L%s/%s" % (sysroot, d) for d in ("usr/lib/x86_64-linux-gnu", "lib/x86_64-linux-gnu"))
    return ["-DCMAKE_SYSROOT=" + sysroot, "-DCMAKE_EXE_LINKER_FLAGS=" + libs,
            "-DCMAKE_MODULE_LINKER_FLAGS=" + libs, "-DCMAKE_SHARED_LINKER_FLAGS=" + libs,
            "-DCMAKE_C_STANDARD_LIBRARIES=-ldl"]


def host_triple():
    return subprocess.run(["gcc", "-dumpmachine"], capture_output=True, text=True).stdout.strip()


def multiarch_python_headers(build_dir):
    """Debian's Python.h includes <TRIPLE/python3.X/pyconfig.h>, which
    --sysroot looks for in the sysroot: a directory of links to the host's
    TRIPLE/python3.* header directories (those alone, no C library header)."""
    triple = host_triple()
    out = os.path.join(build_dir, "python-multiarch")
    os.makedirs(os.path.join(out, triple), exist_ok=True)
    host = os.path.join("/usr/include", triple)
    for d in os.listdir(host) if os.path.isdir(host) else ():
        link = os.path.join(out, triple, d)
        if d.startswith("python3") and not os.path.islink(link):
            os.symlink(os.path.join(host, d), link)
    return out


def jobs():
    return os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)


def build(repo, build_dir, python):
    extra = ["-DCMAKE_C_FLAGS=" + prefix_map_flags(repo, build_dir)]
    sysroot = os.environ.get("JITFRAMES_WHEEL_SYSROOT")
    if sysroot:
        if not os.path.isfile(os.path.join(sysroot, "usr", "include", "stdio.h")):
            sys.exit("build_with_cmake: %s holds no C library headers "
                     "(scripts/python-sysroot --manylinux %s)" % (sysroot, sysroot))
        extra += sysroot_flags(os.path.abspath(sysroot))
        extra[0] += " -isystem " + multiarch_python_headers(build_dir)
    configure(repo, build_dir, python, extra)
    # interpreters.txt: "<tag> <python> <package parent>", one line: ours.
    with open(os.path.join(build_dir, "bindings", "python", "interpreters.txt")) as f:
        line = f.readline().split()
    if not line:
        sys.exit("build_with_cmake: CMake found no extension to build for %s (see its messages above)"
                 % python)
    tag, _, pkg_parent = line
    tool_cc = os.environ.get("JITFRAMES_TOOL_CC")
    targets = ["jitframes_python_" + tag.replace(".", "_")] + ([] if tool_cc else ["jitframes_cli"])
    run(["cmake", "--build", build_dir, "-j", jobs(), "--target"] + targets)
    tools = os.path.join(build_dir, "tools")
    if tool_cc:
        tools = build_static_tool(repo, os.path.join(build_dir, "static-tool"), tool_cc)
    return os.path.join(pkg_parent, "jitframes"), tools


def build_static_tool(repo, build_dir, cc):
    """The jitframes tool linked statically with CC (musl-gcc): it runs on any
    Linux of its architecture. musl's headers leave out the kernel's, which
    the tool includes (linux/netlink.h...): a directory of links to the
    host's linux, asm and asm-generic only, so no glibc header mixes in."""
    kernel = os.path.join(build_dir, "kernel-headers")
    os.makedirs(kernel, exist_ok=True)
    triple = host_triple()
    for name, target in (("linux", "/usr/include/linux"), ("asm-generic", "/usr/include/asm-generic"),
                         ("asm", "/usr/include/%s/asm" % triple)):
        link = os.path.join(kernel, name)
        if not os.path.islink(link):
            os.symlink(target, link)
    flags = "-isystem %s %s" % (kernel, prefix_map_flags(repo, build_dir))
    run(["cmake", "-S", repo, "-B", build_dir, "-DCMAKE_BUILD_TYPE=RelWithDebInfo", "-DCMAKE_C_COMPILER=" + cc,
         "-DCMAKE_C_FLAGS=" + flags, "-DCMAKE_EXE_LINKER_FLAGS=-static",
         "-DJITFRAMES_BUILD_TESTS=OFF", "-DJITFRAMES_BUILD_EXAMPLES=OFF", "-DJITFRAMES_BUILD_BENCH=OFF",
         "-DJITFRAMES_BUILD_LUAJIT=OFF", "-DJITFRAMES_BUILD_PYTHON=OFF", "-DJITFRAMES_WERROR=OFF"])
    run(["cmake", "--build", build_dir, "-j", jobs(), "--target", "jitframes_cli"])
    return os.path.join(build_dir, "tools")


def stripped_copy(src, dst, *how):
    shutil.copy2(src, dst)
    run(["strip"] + list(how) + [dst])


def flamegraph_libs(repo, npm_dir):
    for d in (os.environ.get("JITFRAMES_FLAMEGRAPH_LIBS"),
              os.path.join(repo, "tools", "record", "flamegraph", "node_modules")):
        if d and os.path.isdir(os.path.join(d, "d3-flame-graph")):
            return d
    os.makedirs(npm_dir, exist_ok=True)
    for f in ("package.json", "package-lock.json"):
        shutil.copy(os.path.join(repo, "tools", "record", "flamegraph", f), npm_dir)
    try:
        subprocess.run(["npm", "ci", "--prefer-offline", "--no-audit", "--no-fund", "--silent"],
                       cwd=npm_dir, check=True, stdout=sys.stderr)
        return os.path.join(npm_dir, "node_modules")
    except (OSError, subprocess.CalledProcessError) as e:
        print("build_with_cmake: WARNING: no d3 for the flame graph page (%s): "
              "jitframes record will write no page" % e, file=sys.stderr)
        return None


# What the CMake build of the extension and the tool reads, from the
# repository root: the sdist carries these (git's list of them).
SDIST_PATHS = ["CMakeLists.txt", "LICENSE", "README.md", "CHANGELOG.md", "cmake", "include", "src", "tools",
               "docs", "bindings/python/CMakeLists.txt", "bindings/python/cmake", "bindings/python/src",
               "bindings/python/jitframes"]


def dist(repo):
    """Copy what the C build needs into the sdist (meson dist's root)."""
    root = os.environ["MESON_DIST_ROOT"]
    files = subprocess.run(["git", "-C", repo, "ls-files", "-z", "--"] + SDIST_PATHS, check=True,
                           capture_output=True).stdout.decode().split("\0")
    for f in filter(None, files):
        dst = os.path.join(root, "jitframes-src", f)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(os.path.join(repo, f), dst, follow_symlinks=False)
    license_ = os.path.join(root, "LICENSE")  # a symlink to ../../LICENSE in the repository
    os.unlink(license_)
    shutil.copy2(os.path.join(repo, "LICENSE"), license_)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dist", metavar="REPO")
    ap.add_argument("--print-info", metavar="REPO")
    ap.add_argument("--flamegraph-libs", nargs=2, metavar=("REPO", "DIR"))
    ap.add_argument("--source")
    ap.add_argument("--build")
    ap.add_argument("--python")
    ap.add_argument("--out")
    a = ap.parse_args()
    if a.dist:
        dist(os.path.abspath(a.dist))
        return
    if a.print_info:
        base = {"base": sys.base_prefix, "platbase": sys.base_prefix}
        platlib = sysconfig.get_paths(vars=base)["platlib"]
        print("\n".join((header_version(a.print_info), sysconfig.get_config_var("EXT_SUFFIX"),
                         os.path.relpath(platlib, sys.base_prefix))))
        return
    if a.flamegraph_libs:
        libs = flamegraph_libs(*(os.path.abspath(d) for d in a.flamegraph_libs))
        if libs:
            print("\n".join("%s|%s" % (os.path.join(libs, f), f) for f in flamegraph_files(a.flamegraph_libs[0])))
        return
    build_dir = os.environ.get("JITFRAMES_CMAKE_BUILD_DIR") or a.build
    pkg, tools = build(os.path.abspath(a.source), os.path.abspath(build_dir), a.python)
    ext = next(f for f in os.listdir(pkg) if f.startswith("_jitframes") and f.endswith(".so"))
    stripped_copy(os.path.join(pkg, ext), os.path.join(a.out, ext), "--strip-unneeded")
    stripped_copy(os.path.join(tools, "jitframes"), os.path.join(a.out, "jitframes"), "--strip-all")
    # What the package was built for, without the path of the (often
    # temporary) interpreter that built it.
    with open(os.path.join(a.out, "_built_for.py"), "w") as f:
        f.write('VERSION = "%d.%d.%d"\nINTERPRETER = "%s"\nEXT_SUFFIX = "%s"\n' % (
            *sys.version_info[:3], os.path.basename(a.python), sysconfig.get_config_var("EXT_SUFFIX")))
    for f in ("jitframes-record", "jfrecord_target.py", "jfrecord_inject.py", "jfrecord_confine.py",
              "jfrecord_exit.py", "flamegraph.py"):
        shutil.copy2(os.path.join(tools, f), os.path.join(a.out, f))


if __name__ == "__main__":
    main()
