"""gdb script: walk every instruction of LuaJIT's compiled traces, checking
the backtrace at each.

    gdb -batch -nx -x gdb_walk_traces.py --args ffi_host ffi_bt.lua
    (environment: WALK=check, or WALK=control for the run without jitframes;
    WALK_REMOTE=1 when attached to qemu's gdb stub, see cross.sh)

ffi_bt.lua passes the traces' list to jf_lua_ready; a breakpoint there sets
one at each trace's first instruction. From each, `nexti` (calls stepped
over) runs through the trace until it leaves it (an exit, a link to the
interpreter); at every instruction the backtrace must be: the trace, named
TRACE_<n>::<script>:<line>, then lua_pcall (the C function that entered the
VM), then named C frames down to main. Side traces start in their parent's
frame and root traces adjust the stack in their first instruction, so the
entry instructions are where a wrong unwind rule shows. Control: without
jitframes, no frame has a name at a trace's first instruction.
"""
import os
import re

import gdb

MODE = os.environ.get("WALK", "check")
MAX_STEPS = 400


def fail(msg):
    print("FAIL: " + msg)
    try:
        kill()
    finally:
        gdb.execute("quit 1")


def kill():
    if gdb.selected_thread() is not None:
        gdb.execute("kill", to_string=True)


def chain():
    names, frame = [], gdb.newest_frame()
    while frame is not None and len(names) < 64:
        names.append(frame.name())
        frame = frame.older()
    return names


def check_chain(tr, offset):
    names = chain()
    where = "TRACE_%d+%d" % (tr, offset)
    if not (names[0] or "").startswith("TRACE_%d::" % tr):
        fail("%s: frame 0 is %r, not the trace (backtrace %r)" % (where, names[0], names))
    if len(names) < 2 or names[1] != "lua_pcall":
        fail("%s: the trace's caller is %r, not lua_pcall (backtrace %r)" % (where, names[1:2], names))
    if "main" not in names:
        fail("%s: the backtrace does not reach main: %r" % (where, names))
    if None in names[: names.index("main")]:
        fail("%s: an unnamed frame before main: %r" % (where, names))


def run():
    for cmd in ("set debuginfod enabled off", "set pagination off", "set confirm off"):
        try:
            gdb.execute(cmd)
        except gdb.error:
            pass
    ready = gdb.Breakpoint("jf_lua_ready")
    # Under qemu-user (cross.sh) gdb is attached to a stopped process already.
    gdb.execute("continue" if os.environ.get("WALK_REMOTE") else "run")
    text = gdb.parse_and_eval("traces").string()
    ready.delete()
    traces = {}
    for line in text.splitlines():
        tr, addr, size, parent = line.split()
        traces[int(tr)] = (int(addr, 16), int(size), int(parent))
    if not any(p == 0 for _, _, p in traces.values()) or not any(p for _, _, p in traces.values()):
        fail("the script made no root and side trace: %r" % traces)
    entries = {gdb.Breakpoint("*0x%x" % a, internal=True): tr for tr, (a, _, _) in traces.items()}

    def trace_at(pc):
        for tr, (a, n, _) in traces.items():
            if a <= pc < a + n:
                return tr
        return None

    checked = {}
    while entries:
        gdb.execute("continue")
        if gdb.selected_thread() is None:
            break
        pc = int(gdb.newest_frame().pc())
        tr = trace_at(pc)
        for bp, t in list(entries.items()):
            if t == tr:
                bp.delete()
                del entries[bp]
        if tr is None:
            fail("stopped outside the traces at 0x%x" % pc)
        if MODE == "control":
            names = chain()
            if any(n and n.startswith("TRACE_") for n in names):
                fail("control: a trace is named without jitframes: %r" % names)
            print("control: TRACE_%d entered, unnamed as expected: %r" % (tr, names[:3]))
            continue
        for _ in range(MAX_STEPS):
            pc = int(gdb.newest_frame().pc())
            tr = trace_at(pc)
            if tr is None:
                break
            check_chain(tr, pc - traces[tr][0])
            checked.setdefault(tr, set()).add(pc - traces[tr][0])
            gdb.execute("nexti", to_string=True)
    if MODE == "control":
        print("PASS (control)")
        kill()
        return
    kinds = {"root": 0, "side": 0}
    for tr, offsets in sorted(checked.items()):
        a, n, parent = traces[tr]
        if 0 not in offsets:
            fail("TRACE_%d: its first instruction was never checked" % tr)
        kinds["side" if parent else "root"] += 1
        print("TRACE_%d (%s, %d bytes): backtrace checked at %d instructions, offsets %s"
              % (tr, "side of %d" % parent if parent else "root", n, len(offsets),
                 ",".join(str(o) for o in sorted(offsets))))
    total = sum(len(o) for o in checked.values())
    if not kinds["root"] or not kinds["side"] or total < 40:
        fail("too little walked: %r, %d instructions" % (kinds, total))
    print("PASS: %d instructions in %d traces, each with the trace, lua_pcall and main"
          % (total, len(checked)))
    kill()


try:
    run()
except gdb.error as e:
    fail("gdb: %s" % e)
