"""gdb or lldb stopped in C code called from Python, under the CPython client.

    debugger_bt.py gdb|lldb SINKS      (run by the interpreter under test)

A script calls baz() -> bar() -> foo() -> os.kill(SIGTRAP), after 40 other
functions were registered so the trampolines of foo, bar and baz sit in a
merged symfile (and, with jitdump among SINKS, spaced apart). The debugger
stops at the signal and prints its backtrace, which must hold py::foo,
py::bar, py::baz in that order (foo innermost), each with <script>:<line of
its def>, and no unnamed frame -- except code of a stripped interpreter
executable (Debian's /usr/bin/python3.11 has no symbols for its static
functions), which is checked and reported. Negative control: without
activation, no py:: frame.
"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from lldb_frames import lldb_frames  # noqa: E402

SCRIPT = '''import os, signal, sys
import jitframes

def foo(trap):
    if trap:
        os.kill(os.getpid(), signal.SIGTRAP)

def bar(trap):
    foo(trap)

def baz(trap):
    bar(trap)

if sys.argv[1] != "none":
    jitframes.activate(sys.argv[1])
baz(False)
ns = {}
exec("".join("def warm%d():\\n    return %d\\n" % (i, i) for i in range(40)), ns)
for i in range(40):
    ns["warm%d" % i]()
baz(True)
'''
DEF_LINES = {"foo": 4, "bar": 8, "baz": 11}


def run_debugger(debugger, script, sinks, workdir):
    env = dict(os.environ, JITFRAMES_DIR=workdir)
    env.pop("LD_PRELOAD", None)  # the debugger's own process; the inferior below gets it back
    preload = os.environ.get("LD_PRELOAD")
    if debugger == "gdb":
        cmd = ["gdb", "-batch", "-nx", "-ex", "set debuginfod enabled off"]
        if preload:
            cmd += ["-ex", "set environment LD_PRELOAD " + preload]
        cmd += ["-ex", "run", "-ex", "bt", "-ex", "info proc mappings",
                "--args", sys.executable, script, sinks]
    else:
        cmd = ["lldb", "-b"]
        if preload:
            cmd += ["-o", "settings set target.env-vars LD_PRELOAD=" + preload]
        cmd += ["-o", "run", "-o", "bt", "-o", "image list", "-o", "process kill",
                "--", sys.executable, script, sinks]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=240)
    return p.stdout + p.stderr


def gdb_frames(out):
    """[(name, location, address)] of `bt`, innermost first."""
    frames = []
    for line in out.splitlines():
        m = re.match(r"#(\d+)\s+(?:(0x[0-9a-f]+) in )?(\S+) \(.*?\)(?: at (\S+))?", line)
        if m:
            frames.append((m.group(3), m.group(4) or "", int(m.group(2), 16) if m.group(2) else None))
    return frames


def gdb_mapping_of(out, address):
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 5 and parts[0].startswith("0x"):
            try:
                start, end = int(parts[0], 16), int(parts[1], 16)
            except ValueError:
                continue
            if start <= address < end:
                return parts[-1] if len(parts) >= 6 else ""
    return ""


def stripped(path):
    out = subprocess.run(["readelf", "-S", "-W", path], capture_output=True, text=True).stdout
    return ".symtab" not in out


def check_unnamed(debugger, out, frames):
    """Unnamed frames are allowed only in a stripped interpreter executable."""
    exe = os.path.realpath(sys.executable)
    allowed = 0
    for f in frames:
        unnamed = f[0] == "??" or f[0].startswith("___lldb_unnamed_symbol")
        if not unnamed:
            continue
        where = gdb_mapping_of(out, f[2]) if debugger == "gdb" else f[3]
        names_of_exe = (exe, os.path.basename(exe), os.path.basename(sys.executable))
        in_exe = where and (os.path.realpath(where) == exe or where in names_of_exe)
        if not (in_exe and stripped(exe)):
            sys.exit("FAIL: unnamed frame at %#x (in %r), not in the stripped interpreter %s"
                     % (f[2], where, exe))
        allowed += 1
    if allowed:
        print("note: %d frames are unnamed static functions of the stripped interpreter %s "
              "(no symbols to name them; not jitframes' frames)" % (allowed, exe))


def main():
    debugger, sinks = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="jfpy-dbg-") as tmp:
        script = os.path.join(tmp, "bt_target.py")
        with open(script, "w") as f:
            f.write(SCRIPT)
        parse = gdb_frames if debugger == "gdb" else lldb_frames
        out = run_debugger(debugger, script, sinks, tmp)
        frames = parse(out)
        print("\n".join("  %s  %s" % (f[0], f[1]) for f in frames))
        py = [f for f in frames if f[0].startswith("py::")]
        names = [f[0] for f in py]
        want = ["py::%s:%s" % (fn, script) for fn in ("foo", "bar", "baz")]
        if names != want:
            sys.exit("FAIL: %s names %s, expected exactly %s\n%s" % (debugger, names, want, out[-3000:]))
        for (name, loc, *_), fn in zip(py, ("foo", "bar", "baz")):
            if not re.search(r"(^|/)bt_target\.py:%d(:\d+)?$" % DEF_LINES[fn], loc):
                sys.exit("FAIL: %s is at %r, expected bt_target.py:%d" % (name, loc, DEF_LINES[fn]))
        check_unnamed(debugger, out, frames)
        print("ok: %s bt names py::foo, py::bar, py::baz with file:line (sinks %s)" % (debugger, sinks))
        control = parse(run_debugger(debugger, script, "none", tmp))
        if not control or any(f[0].startswith("py::") for f in control):
            sys.exit("FAIL: negative control: no backtrace, or py:: frames without jitframes")
        print("ok: without jitframes no py:: frame")
    print("PASS")


if __name__ == "__main__":
    main()
