"""The CPython client on Debian's CPython 3.11 for ppc64le or s390x, under qemu-user.

    cross_runtime.py QEMU SYSROOT PYTHON PKG_PARENT check|control   (host python3; see cross.sh)

PYTHON is a python3.11 for the architecture (an embedding host around the
sysroot's libpython3.11.so), PKG_PARENT holds the jitframes package built
for it. In mode check:

1. perf map and returns through trampolines: 60 functions g0..g59, each
   calling the next and returning its result combined with its own, the
   chain taken 8 times recursively (480 Python frames, each under its
   trampoline, returned through one by one). The printed result must be the
   host's for the same code: on ppc64le a trampoline that leaves another
   module's TOC pointer (r2) to its caller after the call crashes or
   corrupts the caller here. /tmp/perf-PID.map (PID: qemu's, the guest's
   getpid) must name every py::g<i>:<script>.
2. gdb-multiarch attached to qemu's gdb stub: f0 -> ... -> f9, the last
   sending itself SIGTRAP (kill() in libc, reached from Python). `bt` must
   name py::f9 ... py::f0 (innermost first), each at <script>:<line of its
   def>, and reach main, with no "Backtrace stopped" or "PC not saved".

Mode control: the same walk with the trampolines active but only the perf
map sink, so gdb gets neither their names nor their unwind rules: the walk's
check must fail (it names no py:: frame).
"""
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from debugger_bt import gdb_frames  # noqa: E402
from debugger_chain import chain_script  # noqa: E402

CHAIN = 60     # distinct functions, each with its own trampoline
ROUNDS = 8     # times the chain is taken, recursively
DEPTH = 10     # Python frames under the debugger's stop


def returns_script():
    # A map in /tmp named for our pid is an earlier process's: removed first.
    lines = ["import os, sys", "import jitframes", "stale = '/tmp/perf-%d.map' % os.getpid()",
             "if os.path.exists(stale): os.unlink(stale)", "jitframes.activate(sys.argv[1])"]
    for i in range(CHAIN):
        nxt = "g%d(n)" % (i + 1) if i + 1 < CHAIN else "(g0(n - 1) if n else 1)"
        lines.append("def g%d(n):" % i)
        lines.append("    return (%s * 31 + %d * n + %d) %% 1000000007" % (nxt, i + 1, i))
    lines.append("print('pid', os.getpid())")
    lines.append("print('result', g0(%d))" % (ROUNDS - 1))
    return "\n".join(lines) + "\n"


def expected_result(text):
    """The chain's value computed by this (host) Python."""
    body = "\n".join(l for l in text.splitlines() if l.startswith(("def ", "    return")))
    ns = {}
    exec(body, ns)
    return ns["g0"](ROUNDS - 1)


class Guest:
    def __init__(self, qemu, sysroot, python, pkg_parent, workdir):
        self.qemu, self.sysroot, self.python = qemu, sysroot, python
        self.env = dict(os.environ, PYTHONHOME=sysroot + "/usr", PYTHONPATH=pkg_parent,
                        PYTHONDONTWRITEBYTECODE="1", JITFRAMES_DIR=workdir)
        self.env.pop("LD_PRELOAD", None)

    def command(self, script, sinks, gdb_port=None):
        cmd = [self.qemu, "-L", self.sysroot]
        if gdb_port:
            cmd += ["-g", str(gdb_port)]
        return cmd + [self.python, "-s", script, sinks]


def check_returns(guest, tmp):
    script = os.path.join(tmp, "returns.py")
    text = returns_script()
    with open(script, "w") as f:
        f.write(text)
    p = subprocess.run(guest.command(script, "perfmap"), env=guest.env, capture_output=True,
                       text=True, timeout=240)
    pid = re.search(r"^pid (\d+)$", p.stdout, re.M)
    perf_map = "/tmp/perf-%s.map" % (pid.group(1) if pid else "?")
    try:
        if p.returncode != 0:
            sys.exit("FAIL: the program returning through %d trampolines exited with %d\n%s%s"
                     % (CHAIN * ROUNDS, p.returncode, p.stdout, p.stderr[-3000:]))
        got = re.search(r"^result (\d+)$", p.stdout, re.M)
        want = expected_result(text)
        if not got or int(got.group(1)) != want:
            sys.exit("FAIL: through the trampolines the chain returned %s, the host computes %d"
                     % (got.group(1) if got else "nothing", want))
        print("ok: %d Python frames returned through their trampolines, result %d as on the host"
              % (CHAIN * ROUNDS, want))
        with open(perf_map, errors="replace") as f:
            names = {line.split(None, 2)[2].rstrip("\n") for line in f if len(line.split(None, 2)) == 3}
        missing = ["g%d" % i for i in range(CHAIN) if "py::g%d:%s" % (i, script) not in names]
        if missing:
            sys.exit("FAIL: %s lacks py:: names of %d of %d functions: %s"
                     % (perf_map, len(missing), CHAIN, missing[:10]))
        print("ok: %s (qemu's pid) names all %d py::g<i>:%s" % (perf_map, CHAIN, script))
    finally:
        if pid and os.path.exists(perf_map):
            os.unlink(perf_map)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_under_gdb(guest, script, sinks, tmp):
    """gdb-multiarch's output, stopped at the guest's SIGTRAP."""
    for _ in range(5):  # a port taken meanwhile makes qemu exit at once
        port = free_port()
        log = open(os.path.join(tmp, "qemu.log"), "w+")
        q = subprocess.Popen(guest.command(script, sinks, port), env=guest.env,
                             stdout=log, stderr=subprocess.STDOUT)
        time.sleep(0.3)
        if q.poll() is None:
            break
    else:
        log.seek(0)
        sys.exit("FAIL: qemu could not start a gdb stub: %s" % log.read())
    pkg_dir = os.path.join(guest.env["PYTHONPATH"], "jitframes")
    cmd = ["gdb-multiarch", "-nx", "-batch", "-ex", "set sysroot " + guest.sysroot,
           "-ex", "set solib-search-path " + pkg_dir, "-ex", "set tcp connect-timeout 20",
           "-ex", "file " + guest.python, "-ex", "target remote 127.0.0.1:%d" % port,
           "-ex", "continue", "-ex", "bt", "-ex", "kill"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    finally:
        q.kill()
        q.wait()
        log.close()
        # The guest removed any earlier map of qemu's pid before it started:
        # one there now is this run's (the control's perfmap sink).
        if os.path.exists("/tmp/perf-%d.map" % q.pid):
            os.unlink("/tmp/perf-%d.map" % q.pid)
    return p.stdout + p.stderr


def walk_problems(out, script, def_lines):
    """What is wrong with gdb's backtrace, or []."""
    frames = gdb_frames(out)
    py = [f for f in frames if f[0].startswith("py::")]
    want = ["py::f%d:%s" % (i, script) for i in reversed(range(DEPTH))]
    got = [f[0] for f in py]
    problems = []
    if got != want:
        problems.append("named %d of %d py:: frames: %s" % (sum(n in got for n in want), DEPTH, got))
    for (name, loc, *_), i in zip(py, reversed(range(DEPTH))):
        if not re.search(r"(^|/)chain\.py:%d$" % def_lines[i], loc):
            problems.append("%s is at %r, not chain.py:%d" % (name, loc, def_lines[i]))
    if not frames or frames[-1][0] != "main":
        problems.append("the walk ends at %r, not main" % (frames[-1][0] if frames else None))
    for stop in ("Backtrace stopped", "PC not saved", "previous frame identical"):
        if stop in out:
            problems.append("gdb says %r" % stop)
    return problems


def check_walk(guest, tmp, control):
    script = os.path.join(tmp, "chain.py")
    text, def_lines = chain_script(DEPTH)
    with open(script, "w") as f:
        f.write(text)
    out = run_under_gdb(guest, script, "perfmap" if control else "gdb", tmp)
    if "SIGTRAP" not in out:
        sys.exit("FAIL: the guest did not stop at its SIGTRAP\n%s" % out[-3000:])
    bt = [l for l in out.splitlines() if l.startswith("#")]
    problems = walk_problems(out, script, def_lines)
    if control:
        print("\n".join(bt))
        if not any(p.startswith("named 0 of") for p in problems):
            sys.exit("FAIL: negative control: without the gdb sink the walk still named py:: frames")
        print("control: without the gdb sink the walk's check fails: %s" % "; ".join(problems))
        return
    if problems:
        sys.exit("FAIL: gdb-multiarch's bt: %s\n%s" % ("; ".join(problems), "\n".join(bt)))
    print("\n".join(bt))
    print("ok: gdb-multiarch bt names py::f%d ... py::f0 with chain.py:<def line> and reaches main"
          % (DEPTH - 1))


def main():
    qemu, sysroot, python, pkg_parent, mode = sys.argv[1:6]
    with tempfile.TemporaryDirectory(prefix="jfpy-cross-") as tmp:
        guest = Guest(qemu, sysroot, python, pkg_parent, tmp)
        if mode == "check":
            check_returns(guest, tmp)
        check_walk(guest, tmp, mode == "control")
    print("PASS")


if __name__ == "__main__":
    main()
