# gdb script: stopped at the start of step_caller, single-step (si) until the
# call through the trampoline template has gone into step_target and come back.
# At every stop inside the template or the target, the backtrace must be
# complete: every frame named, in the expected order, down to main. Every
# instruction of the template must have been visited. Prints STEP-PASS or
# STEP-FAIL lines; the driver checks them.
import gdb

TEMPLATE = "jitframes_trampoline_template"
EXPECT = {
    TEMPLATE: [TEMPLATE, "step_caller", "main"],
    "step_target": ["step_target", TEMPLATE, "step_caller", "main"],
}
MAX_STEPS = 600


def backtrace():
    names = []
    frame = gdb.newest_frame()
    while frame is not None and len(names) < 16:
        names.append(frame.name() or "??")
        if names[-1] == "main":
            break
        frame = frame.older()
    return names


def template_instructions():
    # The driver sets $template_size from the ELF symbol table (readelf).
    start = int(gdb.parse_and_eval("(long)&" + TEMPLATE))
    size = int(gdb.parse_and_eval("$template_size"))
    arch = gdb.newest_frame().architecture()
    return start, size, [i["addr"] - start for i in arch.disassemble(start, start + size - 1)]


def main():
    start, size, offsets = template_instructions()
    print("template at 0x%x, %d bytes, instructions at %s" % (start, size, offsets))
    visited, failures, stops = set(), 0, 0
    entered = False
    for _ in range(MAX_STEPS):
        gdb.execute("si", to_string=True)
        stops += 1
        pc = gdb.newest_frame().pc()
        name = gdb.newest_frame().name() or "??"
        if start <= pc < start + size:
            visited.add(pc - start)
            entered = True
        if name in EXPECT:
            bt = backtrace()
            if bt != EXPECT[name]:
                failures += 1
                print("STEP-FAIL at pc 0x%x (%s+%d): bt %s, expected %s"
                      % (pc, name, pc - start if name == TEMPLATE else 0, bt, EXPECT[name]))
        elif name == "step_caller" and entered:
            break
        elif name != "step_caller":
            failures += 1
            print("STEP-FAIL: unexpected stop in %s at 0x%x, bt %s" % (name, pc, backtrace()))
    else:
        failures += 1
        print("STEP-FAIL: no return to step_caller within %d steps" % MAX_STEPS)
    missing = sorted(set(offsets) - visited)
    if missing:
        failures += 1
        print("STEP-FAIL: template instructions never visited: %s" % missing)
    if failures == 0:
        print("STEP-PASS: %d stops, %d template instructions, every backtrace complete"
              % (stops, len(offsets)))


main()
