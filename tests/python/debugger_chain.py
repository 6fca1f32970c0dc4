"""gdb or lldb stopped under a deep chain of Python functions (CPython client).

    debugger_chain.py gdb|lldb SINKS DEPTH...   (run by the interpreter under test)

For each DEPTH, a script defines f0 ... f<DEPTH-1>, each calling the next, the
last sending itself SIGTRAP, and calls f0: every trampoline is registered
while the chain runs, packed next to the previous ones, so the symfiles
holding them are merged and rebuilt under the debugger's eyes. The
debugger's backtrace must hold exactly py::f<DEPTH-1> ... py::f0 (innermost
first), each with <script>:<line of its def>, and no unnamed frame outside
a stripped interpreter (see debugger_bt.py).
"""
import os
import re
import sys
import tempfile

from debugger_bt import check_unnamed, gdb_frames, lldb_frames, run_debugger


def chain_script(depth):
    """The script's text and the line of each f<i>'s def."""
    lines = ["import os, signal, sys", "import jitframes",
             'if sys.argv[1] != "none":', "    jitframes.activate(sys.argv[1])"]
    def_lines = []
    for i in range(depth):
        def_lines.append(len(lines) + 1)
        lines.append("def f%d():" % i)
        lines.append("    return f%d()" % (i + 1) if i + 1 < depth
                     else "    os.kill(os.getpid(), signal.SIGTRAP)")
    lines.append("f0()")
    return "\n".join(lines) + "\n", def_lines


def check_chain(debugger, sinks, depth, tmp):
    text, def_lines = chain_script(depth)
    script = os.path.join(tmp, "chain%d.py" % depth)
    with open(script, "w") as f:
        f.write(text)
    out = run_debugger(debugger, script, sinks, tmp)
    frames = (gdb_frames if debugger == "gdb" else lldb_frames)(out)
    py = [f for f in frames if f[0].startswith("py::")]
    want = ["py::f%d:%s" % (i, script) for i in reversed(range(depth))]
    got = [f[0] for f in py]
    if got != want:
        named = sum(1 for name in want if name in got)
        sys.exit("FAIL: %s named %d of %d py:: frames of the %d-deep chain (sinks %s): %s\n%s"
                 % (debugger, named, depth, depth, sinks, got, out[-3000:]))
    for (name, loc, *_), i in zip(py, reversed(range(depth))):
        if not re.search(r"(^|/)chain%d\.py:%d(:\d+)?$" % (depth, def_lines[i]), loc):
            sys.exit("FAIL: %s is at %r, expected chain%d.py:%d" % (name, loc, depth, def_lines[i]))
    check_unnamed(debugger, out, frames)
    print("ok: %s names all %d py:: frames of a %d-deep chain with file:line (sinks %s)"
          % (debugger, depth, depth, sinks))


def main():
    debugger, sinks = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="jfpy-chain-") as tmp:
        for depth in sys.argv[3:]:
            check_chain(debugger, sinks, int(depth), tmp)
    print("PASS")


if __name__ == "__main__":
    main()
