# gdb -batch -x check_step.py --args jitprog step
# Single-steps every instruction of each JIT call and checks the whole
# backtrace at every stop against a shadow stack: each JIT frame's caller pc
# must be the real return address and its stack pointer the real CFA.
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gdb  # noqa: E402
import jitcheck as jc  # noqa: E402

jc.setup()
gdb.execute("break call_jit")
# Under qemu (target remote) the process is already there: continue it.
gdb.execute("continue" if jc.alive() else "run")

arch = gdb.selected_frame().architecture().name()
STEP_CAP = 400


def entry_frame():
    """Name, return address and CFA at the first instruction of a function."""
    pc = jc.stop_pc()
    name = jc.region_of(pc, jc.regions())
    sp = int(gdb.parse_and_eval("$sp"))
    if arch.startswith("i386"):
        ra = int.from_bytes(gdb.selected_inferior().read_memory(sp, 8).tobytes(), "little")
        return ra, sp + 8, name
    # The caller's stack pointer is sp at entry (on s390x too: its CFA is
    # sp + 160, the caller's register save area above).
    if arch.startswith("aarch64"):
        lr = "$x30"
    elif arch.startswith("powerpc"):
        lr = "$lr"
    elif arch.startswith("s390"):
        lr = "$r14"
    else:
        lr = "$ra"
    return int(gdb.parse_and_eval(lr)), sp, name


def check_stack(stack, where):
    try:
        fs = jc.frames()
    except gdb.error as e:  # a caller unwound wrongly: its return address unreadable
        jc.fail("%s: the walk stopped: %s" % (where, e))
    for i, (ra, cfa, name) in enumerate(reversed(stack)):
        if fs[i].name() != name:
            jc.fail("%s: frame %d is %r, expected %r" % (where, i, fs[i].name(), name))
    names = [f.name() for f in fs[len(stack):]]
    if names != jc.expected_tail():
        jc.fail("%s: callers %r, expected %r" % (where, names, jc.expected_tail()))
    text = gdb.execute("bt", to_string=True)
    if "??" in text:
        jc.fail("%s: '??' in backtrace:\n%s" % (where, text))
    for i, (ra, cfa, name) in enumerate(reversed(stack)):
        caller = fs[i + 1]
        if caller.pc() != ra:
            jc.fail("%s: frame %d pc %#x, expected %#x" % (where, i + 1, caller.pc(), ra))
        sp = int(caller.read_register("sp"))
        if sp != cfa:
            jc.fail("%s: frame %d sp %#x, expected %#x" % (where, i + 1, sp, cfa))


calls = 0
total_steps = 0
while jc.alive() and calls < 10:
    entries = jc.entries()
    # From the breakpoint in call_jit, step into the JIT code.
    for _ in range(STEP_CAP):
        if jc.stop_pc() in entries:
            break
        gdb.execute("stepi", to_string=True)
    else:
        jc.fail("never entered JIT code from call_jit")
    stack = [entry_frame()]
    steps = 0
    while stack:
        where = "call %d step %d pc %#x" % (calls, steps, jc.stop_pc())
        check_stack(stack, where)
        gdb.execute("stepi", to_string=True)
        steps += 1
        if steps > STEP_CAP:
            jc.fail("%s: too many steps" % where)
        pc = jc.stop_pc()
        if pc == stack[-1][0]:
            stack.pop()
        elif pc in entries:
            stack.append(entry_frame())
    print("call %d: %d instructions checked" % (calls, steps))
    total_steps += steps
    calls += 1
    gdb.execute("continue")

if calls != 5:
    jc.fail("stepped through %d calls, expected 5" % calls)
print("PASS (%d instructions)" % total_steps)
