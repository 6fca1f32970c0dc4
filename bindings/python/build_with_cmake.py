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
  build_with_cmake.py --flamegraph-libs REPO DIR
      prints "file|path under node_modules" for each d3 file the record's
      flame graph page inlines (npm run in DIR if need be), or nothing.
  build_with_cmake.py --print-info REPO
      prints include/jitframes.h's version, then this interpreter's extension
      suffix and its platlib relative to its base prefix (where meson-python
      installs), a line each.

The d3 files come from $JITFRAMES_FLAMEGRAPH_LIBS, REPO/tools/flamegraph/
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
    with open(os.path.join(repo, "tools", "flamegraph", "inlined-files.txt")) as f:
        return f.read().split()


def header_version(repo):
    text = open(os.path.join(repo, "include", "jitframes.h")).read()
    parts = [re.search(r"#define JF_VERSION_%s (\d+)" % p, text).group(1)
             for p in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(parts)


def run(cmd):
    print("+ " + " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)


def build(repo, build_dir, python):
    run(["cmake", "-S", repo, "-B", build_dir, "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
         "-DJITFRAMES_BUILD_TESTS=OFF", "-DJITFRAMES_BUILD_EXAMPLES=OFF",
         "-DJITFRAMES_BUILD_BENCH=OFF", "-DJITFRAMES_BUILD_LUAJIT=OFF", "-DJITFRAMES_WERROR=OFF",
         "-DJITFRAMES_PYTHON_INTERPRETERS=" + python])
    # interpreters.txt: "<tag> <python> <package parent>", one line: ours.
    with open(os.path.join(build_dir, "bindings", "python", "interpreters.txt")) as f:
        line = f.readline().split()
    if not line:
        sys.exit("build_with_cmake: CMake found no extension to build for %s (see its messages above)"
                 % python)
    tag, _, pkg_parent = line
    jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
    run(["cmake", "--build", build_dir, "-j", jobs, "--target", "jitframes_cli",
         "jitframes_python_" + tag.replace(".", "_")])
    return os.path.join(pkg_parent, "jitframes"), os.path.join(build_dir, "tools")


def flamegraph_libs(repo, npm_dir):
    for d in (os.environ.get("JITFRAMES_FLAMEGRAPH_LIBS"),
              os.path.join(repo, "tools", "flamegraph", "node_modules")):
        if d and os.path.isdir(os.path.join(d, "d3-flame-graph")):
            return d
    os.makedirs(npm_dir, exist_ok=True)
    for f in ("package.json", "package-lock.json"):
        shutil.copy(os.path.join(repo, "tools", "flamegraph", f), npm_dir)
    try:
        subprocess.run(["npm", "ci", "--prefer-offline", "--no-audit", "--no-fund", "--silent"],
                       cwd=npm_dir, check=True, stdout=sys.stderr)
        return os.path.join(npm_dir, "node_modules")
    except (OSError, subprocess.CalledProcessError) as e:
        print("build_with_cmake: WARNING: no d3 for the flame graph page (%s): "
              "jitframes record will write no page" % e, file=sys.stderr)
        return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--print-info", metavar="REPO")
    ap.add_argument("--flamegraph-libs", nargs=2, metavar=("REPO", "DIR"))
    ap.add_argument("--source")
    ap.add_argument("--build")
    ap.add_argument("--python")
    ap.add_argument("--out")
    a = ap.parse_args()
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
    for f in (ext, "_built_for.py"):
        shutil.copy2(os.path.join(pkg, f), os.path.join(a.out, f))
    for f in ("jitframes", "jitframes-record", "jfrecord_target.py", "jfrecord_inject.py", "jfrecord_confine.py",
              "flamegraph.py"):
        shutil.copy2(os.path.join(tools, f), os.path.join(a.out, f))


if __name__ == "__main__":
    main()
