# gdb -batch -x check_bt.py --args jitprog traps
# Stops in every JIT function (int3 in the code, SIGUSR1 while one spins),
# checks the backtrace at each, source lines where the region has them, that
# an unregistered region is no longer named, and that jit_frameless, moved
# (jf_move) at the end, is named and unwound at its new address and no
# longer named at its old one.
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gdb  # noqa: E402
import jitcheck as jc  # noqa: E402

jc.setup()
gdb.execute("handle SIGUSR1 stop print pass")
gdb.execute("break checkpoint")
gdb.execute("run")

expected = ["jit_framed", "jit_frameless", "jit_frameless", "jit_multi", "jit_framed", "jit_spin",
            "jit_frameless"]
# The trampoline stops: frame 1 must be the trampoline.
via_trampoline = {4: "tramp_framed", 5: "tramp_spin"}
seen = []
checked_dead = False
for _ in range(40):
    if not jc.alive():
        break
    pc = jc.stop_pc()
    regs = jc.regions()
    name = jc.region_of(pc, regs)
    if name:
        fs = jc.check_names("stop %d" % len(seen))
        if len(seen) in via_trampoline and fs[1].name() != via_trampoline[len(seen)]:
            jc.fail("stop %d: frame 1 is %r, expected %r" % (len(seen), fs[1].name(), via_trampoline[len(seen)]))
        seen.append(name)
        print("stop in %s: %s" % (name, " <- ".join(str(f.name()) for f in fs)))
        if len(seen) == 7:  # the moved copy
            old = int(gdb.parse_and_eval("(unsigned long)jit_moved_from"))
            sym = gdb.execute("info symbol %d" % old, to_string=True)
            print("old address after jf_move: " + sym.strip())
            if old == 0 or "No symbol matches" not in sym:
                jc.fail("jit_frameless still named at its old address: %s" % sym)
            size = [r[1] - r[0] for r in regs if r[2] == "jit_frameless"][0]
            if old <= pc < old + size:
                jc.fail("stopped in the old copy")
        if name == "jit_framed":
            line = gdb.execute("info line *$pc", to_string=True)
            if 'Line 12 of "jitprog.mini"' not in line:
                jc.fail("info line: %s" % line)
            bt = gdb.execute("bt 1", to_string=True)
            if "jitprog.mini:12" not in bt:
                jc.fail("bt shows no line: %s" % bt)
            # Negative control for the unregistration check below.
            doomed = [r for r in regs if r[2] == "jit_doomed"][0]
            sym = gdb.execute("info symbol %d" % doomed[0], to_string=True)
            if "jit_doomed" not in sym:
                jc.fail("live region not named: %s" % sym)
    else:
        what = gdb.parse_and_eval("what").string()
        if what == "unregistered":
            sym = gdb.execute("info symbol jit_dead_addr", to_string=True)
            print("after unregistration: " + sym.strip())
            if "No symbol matches" not in sym:
                jc.fail("unregistered region still named: %s" % sym)
            checked_dead = True
    gdb.execute("continue")

if seen != expected:
    jc.fail("stopped in %r, expected %r" % (seen, expected))
if not checked_dead:
    jc.fail("never reached the unregistration checkpoint")
print("PASS")
