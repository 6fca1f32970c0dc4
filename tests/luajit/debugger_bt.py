#!/usr/bin/env python3
"""gdb and lldb through LuaJIT's compiled traces, with the jitframes module.

    debugger_bt.py FFI_HOST MODULE_DIR

ffi_host runs ffi_bt.lua, whose root and side traces call C functions
through the FFI. gdb: gdb_walk_traces.py checks the backtrace at every
instruction of the traces it walks (the trace by name, lua_pcall, named
frames to main), and the control run without jitframes finds the traces
unnamed. lldb: stopped in the C function called from the root trace and from
the side trace, `bt` has the trace (TRACE_<n>::ffi_bt.lua:<line>) then
lua_pcall, and only named frames down to main; without jitframes, no trace
frame.
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
SCRIPT = os.path.join(HERE, "ffi_bt.lua")


def env_for(module_dir, sinks, workdir):
    return dict(os.environ, SINKS=sinks, JITFRAMES_DIR=workdir,
                LUA_CPATH=os.path.join(module_dir, "?.so") + ";;")


def gdb_walk(host, module_dir, sinks, mode, workdir):
    env = env_for(module_dir, sinks, workdir)
    env["WALK"] = mode
    p = subprocess.run(["gdb", "-batch", "-nx", "-x", os.path.join(HERE, "gdb_walk_traces.py"),
                        "--args", host, SCRIPT], env=env, capture_output=True, text=True, timeout=600)
    report = [l for l in p.stdout.splitlines() if re.match(r"(TRACE_\d+ \(|PASS|FAIL|control:)", l)]
    print("\n".join("  gdb[%s] %s" % (sinks, l) for l in report))
    want = "PASS (control)" if mode == "control" else "PASS:"
    if p.returncode != 0 or not any(l.startswith(want) for l in report):
        print(p.stdout[-4000:], p.stderr[-2000:])
        sys.exit("FAIL: gdb walk (%s, sinks %s)" % (mode, sinks))


def lldb_stop(host, module_dir, sinks, leaf, ignore, workdir):
    p = subprocess.run(["lldb", "-b", "-o", "br set -n %s -i %d" % (leaf, ignore), "-o", "run",
                        "-o", "bt", "-o", "process kill", "--", host, SCRIPT],
                       env=env_for(module_dir, sinks, workdir), capture_output=True, text=True,
                       timeout=300)
    out = p.stdout + p.stderr
    # `run` prints the stop with frame #0 only; `bt` prints the whole stack.
    frames = lldb_frames(out.split("(lldb) bt", 1)[-1])
    if not frames or frames[0][0] != leaf:
        print(out[-4000:])
        sys.exit("FAIL: lldb did not stop in %s" % leaf)
    return frames


def check_lldb(host, module_dir, workdir):
    for leaf, ignore in (("jf_lua_leaf_root", 9000), ("jf_lua_leaf_side", 3000)):
        frames = lldb_stop(host, module_dir, "gdb", leaf, ignore, workdir)
        names = [f[0] for f in frames]
        print("  lldb %s: %s" % (leaf, " <- ".join(names)))
        if not re.match(r"TRACE_\d+::.*ffi_bt\.lua:\d+$", names[1]):
            sys.exit("FAIL: lldb: the frame under %s is %r, not a named trace" % (leaf, names[1]))
        if names[2] != "lua_pcall" or "main" not in names:
            sys.exit("FAIL: lldb: the trace does not unwind to lua_pcall and main: %r" % names)
        if "??" in names[:names.index("main")]:
            sys.exit("FAIL: lldb: an unnamed frame before main: %r" % names)
        control = [f[0] for f in lldb_stop(host, module_dir, "none", leaf, ignore, workdir)]
        print("  lldb %s without jitframes: %s" % (leaf, " <- ".join(control[:3])))
        if any(n.startswith("TRACE_") for n in control):
            sys.exit("FAIL: lldb control: a trace is named without jitframes: %r" % control)


def main():
    host, module_dir = sys.argv[1:3]
    require_tools("gdb", "lldb")
    with tempfile.TemporaryDirectory() as workdir:
        gdb_walk(host, module_dir, "gdb", "check", workdir)
        gdb_walk(host, module_dir, "perfmap,jitdump,gdb,unwind", "check", workdir)
        gdb_walk(host, module_dir, "none", "control", workdir)
        check_lldb(host, module_dir, workdir)
    print("PASS")


main()
