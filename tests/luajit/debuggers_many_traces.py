#!/usr/bin/env python3
"""gdb and lldb name LuaJIT traces after many registrations and a flush.

    debuggers_many_traces.py FFI_HOST MODULE_DIR

ffi_host runs many_traces.lua: 500 root traces registered one by one, all
flushed, all compiled again, then the first, middle and last functions stop
the debugger (breakpoint on jf_lua_marked) under their trace. At each of
the three stops, under sinks gdb and gdb,jitdump, both debuggers' backtrace
must be jf_lua_marked, jf_lua_leaf_root, the function's own trace
(TRACE_<n>::many_traces_gen.lua:<k>), lua_pcall, then only named frames down
to main. Negative control: without jitframes, no trace is named.
"""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
from lldb_frames import lldb_frames  # noqa: E402
from require_tools import require_tools  # noqa: E402
SCRIPT = os.path.join(HERE, "many_traces.lua")
TRACES = 500
STOPS = (1, TRACES // 2, TRACES)  # the functions many_traces.lua stops in


def run(debugger, host, module_dir, sinks, workdir):
    env = dict(os.environ, SINKS=sinks, TRACES=str(TRACES), JITFRAMES_DIR=workdir,
               LUA_CPATH=os.path.join(module_dir, "?.so") + ";;")
    if debugger == "gdb":
        cmd = ["gdb", "-batch", "-nx", "-ex", "set debuginfod enabled off",
               "-ex", "break jf_lua_marked", "-ex", "run"]
        cmd += ["-ex", "bt", "-ex", "continue"] * len(STOPS) + ["-ex", "kill", "--args", host, SCRIPT]
        marker = re.compile(r"^#0 ")
    else:
        cmd = ["lldb", "-b", "-o", "br set -n jf_lua_marked", "-o", "run"]
        cmd += ["-o", "bt", "-o", "continue"] * len(STOPS) + ["-o", "process kill", "--", host, SCRIPT]
        marker = re.compile(r"^\s*\* frame #0: ")
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    out = p.stdout + p.stderr
    # One backtrace per stop; lldb's stop report also shows frame #0 alone.
    chunks, current = [], None
    for line in out.splitlines():
        if marker.match(line):
            current = []
            chunks.append(current)
        if current is not None:
            current.append(line)
    parse = gdb_names if debugger == "gdb" else (lambda t: [f[0] for f in lldb_frames(t)])
    return out, [parse("\n".join(c)) for c in chunks]


def gdb_names(text):
    names = []
    for line in text.splitlines():
        m = re.match(r"#\d+\s+(?:0x[0-9a-f]+ in )?(\S+) \(", line)
        if m:
            names.append(m.group(1))
    return names


def check(debugger, host, module_dir, sinks, workdir):
    out, stops = run(debugger, host, module_dir, sinks, workdir)
    if len(stops) != len(STOPS):
        print(out[-4000:])
        sys.exit("FAIL: %s stopped %d times, not %d" % (debugger, len(stops), len(STOPS)))
    for names, k in zip(stops, STOPS):
        print("  %s[%s] F[%d]: %s" % (debugger, sinks, k, " <- ".join(names[:5])))
        if names[:2] != ["jf_lua_marked", "jf_lua_leaf_root"] or len(names) < 4:
            sys.exit("FAIL: %s did not stop in jf_lua_marked: %r" % (debugger, names))
        if not re.match(r"TRACE_\d+::many_traces_gen\.lua:%d$" % k, names[2]):
            sys.exit("FAIL: %s: the frame under the C calls is %r, not the trace of function %d\n%s"
                     % (debugger, names[2], k, out[-3000:]))
        if names[3] != "lua_pcall" or "main" not in names:
            sys.exit("FAIL: %s: the trace does not unwind to lua_pcall and main: %r" % (debugger, names))
        if "??" in names[:names.index("main")]:
            sys.exit("FAIL: %s: an unnamed frame before main: %r" % (debugger, names))
    print("ok: %s names the trace of functions %s after %d traces registered, flushed "
          "and registered again (sinks %s)" % (debugger, STOPS, TRACES, sinks))


def check_control(debugger, host, module_dir, workdir):
    out, stops = run(debugger, host, module_dir, "none", workdir)
    if len(stops) != len(STOPS) or any(n.startswith("TRACE_") for s in stops for n in s):
        print(out[-3000:])
        sys.exit("FAIL: %s control: no stop, or a trace named without jitframes" % debugger)
    print("ok: %s without jitframes names no trace" % debugger)


def main():
    host, module_dir = sys.argv[1:3]
    require_tools("gdb", "lldb")
    with tempfile.TemporaryDirectory() as workdir:
        for debugger in ("gdb", "lldb"):
            for sinks in ("gdb", "gdb,jitdump"):
                check(debugger, host, module_dir, sinks, workdir)
            check_control(debugger, host, module_dir, workdir)
    print("PASS")


main()
