#!/usr/bin/env python3
"""The CPython client's cost, against the same interpreter plain, with a
do-nothing PEP 523 hook (the floor every hook pays), and with CPython's own
-X perf / -X perf_jit where the version has them.

    python3 bench/python/bench_python.py BUILD_DIR [--rounds N] [--quick] [--no-callgrind]
                                         [--only TAGS_OR_WORKLOADS]

For every interpreter in BUILD_DIR/bindings/python/interpreters.txt and
every workload, each variant runs in its own process, N rounds in a rotating
order (interleaved, so drift hits every variant alike); a child measures its
own CPU time (time.process_time) around the workload only, after start-up
and activation. Printed: medians, ns per Python call over plain and over the
do-nothing hook, jitframes against -X perf / -X perf_jit, and us per created
function. Then valgrind --tool=callgrind counts instructions per call (fib,
one run per variant): stable where timings on a shared machine are not.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

WORKLOAD = r'''
import sys, time
variant, workload, size = sys.argv[1], sys.argv[2], int(sys.argv[3])

def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)

class Point:
    def __init__(self, x):
        self.x = x
    def moved(self, d):
        return self.x + d

def methods(n):
    p, total = Point(1), 0
    for i in range(n):
        total += p.moved(i)
    return total

def loop(n):
    total = 0
    for i in range(n):
        total += i * i % 7
    return total

def create(n):
    ns = {}
    exec(compile("".join("def f%d():\n    return %d\n" % (i, i) for i in range(n)), "gen", "exec"), ns)
    fns = [ns["f%d" % i] for i in range(n)]
    t = time.process_time()
    for f in fns:
        f()
    return time.process_time() - t

if variant == "null":
    import _jf_null_hook
    _jf_null_hook.install()
elif variant.startswith("jitframes:"):
    import jitframes
    jitframes.activate(variant.split(":", 1)[1])
fn = {"fib": fib, "methods": methods, "loop": loop}.get(workload)
if fn:
    t = time.process_time()
    fn(size)
    print(time.process_time() - t)
else:
    print(create(size))
'''

# Python calls each workload makes (for ns per call).
def fib_calls(n):
    a, b = 1, 1  # calls(0) = calls(1) = 1; calls(n) = calls(n-1) + calls(n-2) + 1
    for _ in range(n - 1):
        a, b = b, a + b + 1
    return b if n >= 1 else 1


SIZES = {"fib": 27, "methods": 600000, "loop": 3000000, "create": 20000}
QUICK = {"fib": 23, "methods": 100000, "loop": 500000, "create": 5000}
CALLS = {"fib": lambda n: fib_calls(n), "methods": lambda n: 2 * n + 1,
         "loop": lambda n: 1, "create": lambda n: n}


def variants_for(version):
    v = ["plain", "null", "jitframes:perfmap", "jitframes:jitdump", "jitframes:gdb", "jitframes:unwind"]
    if version >= (3, 12):
        v.append("xperf")
    if version >= (3, 13):
        v.append("xperf_jit")
    return v


def command(python, variant, workload, size, script):
    flags = {"xperf": ["-X", "perf"], "xperf_jit": ["-X", "perf_jit"]}.get(variant, [])
    return [python] + flags + [script, variant, workload, str(size)]


def run_once(python, variant, workload, size, script, env):
    p = subprocess.Popen(command(python, variant, workload, size, script), env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = p.communicate(timeout=600)
    try:
        os.unlink("/tmp/perf-%d.map" % p.pid)  # written by perfmap and -X perf runs
    except FileNotFoundError:
        pass
    if p.returncode != 0:
        raise RuntimeError("%s %s: %s" % (variant, workload, err.strip()[-500:]))
    return float(out.strip().splitlines()[-1])


def version_of(python):
    out = subprocess.run([python, "-c", "import sys; print(*sys.version_info[:3])"],
                         capture_output=True, text=True).stdout.split()
    return tuple(int(x) for x in out)


def bench_interpreter(tag, python, pkg, args, sizes, tmp):
    env = dict(os.environ, PYTHONPATH=pkg, JITFRAMES_DIR=tmp, PYTHONHASHSEED="0")
    env.pop("JITFRAMES", None)
    version = version_of(python)
    variants = variants_for(version)
    absent = [v for v in ("xperf", "xperf_jit") if v not in variants]
    print("\n== %s (%s)%s" % (tag, python, "; absent on this version: " + ", ".join(
        "-X " + v[1:].replace("perf_jit", "perf_jit") for v in absent) if absent else ""))
    script = os.path.join(tmp, "workload.py")
    with open(script, "w") as f:
        f.write(WORKLOAD)
    results = {}
    for workload, size in sizes.items():
        times = {v: [] for v in variants}
        for r in range(args.rounds):
            order = variants[r % len(variants):] + variants[:r % len(variants)]
            for v in order:
                times[v].append(run_once(python, v, workload, size, script, env))
        results[workload] = {v: statistics.median(t) for v, t in times.items()}
        report(workload, size, results[workload], variants)
    return variants, version, script, env


def label(v):
    return {"xperf": "-X perf", "xperf_jit": "-X perf_jit"}.get(v, v)


def report(workload, size, med, variants):
    calls = CALLS[workload](size)
    plain, null = med["plain"], med["null"]
    print("  %s (%d, %d Python calls), median CPU seconds, ratio to plain%s:" % (
        workload, size, calls, "" if calls < 2 else
        ", extra ns per call over plain / over the do-nothing hook"))
    for v in variants:
        extra = "" if v == "plain" or calls < 2 else "  %+8.1f ns  %+7.1f ns" % (
            (med[v] - plain) / calls * 1e9, (med[v] - null) / calls * 1e9)
        print("    %-20s %9.4f s  x%5.3f%s" % (label(v), med[v], med[v] / plain, extra))
    if workload == "create":
        print("    creating a function's frame, us (over plain): " + ", ".join(
            "%s %.2f" % (label(v), (med[v] - plain) / calls * 1e6) for v in variants if v != "plain"))
    for ours, theirs in (("jitframes:perfmap", "xperf"), ("jitframes:jitdump", "xperf_jit")):
        if theirs in med:
            print("    %s / %s: %.3f" % (ours, label(theirs), med[ours] / med[theirs]))


def callgrind(python, variants, script, env, n):
    """Instructions per fib call: the difference between fib(n) and fib(n - 4)
    runs, so start-up and activation cancel out."""
    counts = {}
    for v in variants:
        for size in (n - 4, n):
            p = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"] +
                               command(python, v, "fib", size, script), env=env,
                               capture_output=True, text=True, timeout=900)
            m = re.search(r"Collected : (\d+)", p.stderr)
            if p.returncode != 0 or not m:
                print("    callgrind %s failed: %s" % (v, p.stderr.strip()[-300:]))
                return
            counts[v, size] = int(m.group(1))
    calls = fib_calls(n) - fib_calls(n - 4)
    per_call = {v: (counts[v, n] - counts[v, n - 4]) / calls for v in variants}
    print("  callgrind, fib(%d) - fib(%d) (%d calls), instructions per call; over plain / over the "
          "do-nothing hook:" % (n, n - 4, calls))
    for v in variants:
        print("    %-20s %7.1f  %+7.1f  %+7.1f" % (label(v), per_call[v], per_call[v] - per_call["plain"],
                                                 per_call[v] - per_call["null"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--quick", action="store_true", help="smaller workloads, 3 rounds")
    ap.add_argument("--no-callgrind", action="store_true")
    ap.add_argument("--only", help="comma list of interpreter tags (python3.12.1,...) and/or "
                    "workloads (fib,methods,loop,create) to measure; default: all")
    args = ap.parse_args()
    if args.quick:
        args.rounds = min(args.rounds, 3)
    sizes = QUICK if args.quick else SIZES
    listing = os.path.join(args.build, "bindings", "python", "interpreters.txt")
    builds = [line.split() for line in open(listing) if line.strip()]
    only = set(args.only.split(",")) if args.only else set()
    if only & {b[0] for b in builds}:
        builds = [b for b in builds if b[0] in only]
    if only & set(sizes):
        sizes = {w: n for w, n in sizes.items() if w in only}
    for v in ("3.11", "3.12", "3.13"):
        if not only and not any(b[0].startswith("python" + v) for b in builds):
            print("note: no CPython %s in this build: not measured" % v)
    with tempfile.TemporaryDirectory(prefix="jf-bench-py-") as tmp:
        for tag, python, pkg in builds:
            if not os.path.exists(os.path.join(pkg, "_jf_null_hook" + ext_suffix(python))):
                print("\n== %s: the do-nothing hook is not built (JITFRAMES_BUILD_BENCH=ON)" % tag)
                continue
            variants, version, script, env = bench_interpreter(tag, python, pkg, args, sizes, tmp)
            if not args.no_callgrind:
                callgrind(python, variants, script, env, 15 if args.quick else 18)
            for f in os.listdir(tmp):
                if f.startswith("jit-"):
                    os.unlink(os.path.join(tmp, f))


def ext_suffix(python):
    return subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))"],
                          capture_output=True, text=True).stdout.strip()


if __name__ == "__main__":
    main()
