# Shared helpers for the gdb scripts: read what jitprog exports (its JIT
# regions, function entries, expected C callers) and check backtraces
# against it. Any failure prints "FAIL: ..." and exits gdb with status 1.
import gdb


def fail(msg):
    print("FAIL: " + msg)
    try:
        gdb.execute("bt")
    except gdb.error:
        pass
    gdb.execute("kill")
    gdb.execute("quit 1")


def u(expr):
    return int(gdb.parse_and_eval(expr))


def regions():
    out = []
    for i in range(u("n_jit_regions")):
        r = gdb.parse_and_eval("jit_regions[%d]" % i)
        out.append((int(r["start"]), int(r["end"]), r["name"].string()))
    return out


def entries():
    return {u("jit_entries[%d]" % i) for i in range(u("n_jit_entries"))}


def region_of(pc, regs):
    """The region containing pc; a trampoline (size unknown) only at its entry."""
    for lo, hi, name in regs:
        if lo <= pc < hi or pc == lo == hi:
            return name
    return None


def trampoline_names(regs):
    return {name for lo, hi, name in regs if lo == hi}


def expected_tail():
    return gdb.parse_and_eval("expect_tail").string().split(",")


def frames():
    out = []
    f = gdb.newest_frame()
    while f is not None and len(out) < 64:
        out.append(f)
        f = f.older()
    return out


def check_names(where, n_jit=None):
    """The JIT frames (innermost, by address) carry their region's name and
    the frames under them are exactly expect_tail, ending at main."""
    regs = regions()
    tramps = trampoline_names(regs)
    fs = frames()
    k = 0
    while k < len(fs):
        name = region_of(fs[k].pc() - (1 if k else 0), regs)
        if name is None and fs[k].name() in tramps:
            name = fs[k].name()  # a trampoline: known by name only
        if name is None:
            break
        if fs[k].name() != name:
            fail("%s: frame %d is %r, expected %r" % (where, k, fs[k].name(), name))
        k += 1
    if k == 0:
        fail("%s: frame 0 (pc %#x) is not in JIT code" % (where, fs[0].pc()))
    if n_jit is not None and k != n_jit:
        fail("%s: %d JIT frames, expected %d" % (where, k, n_jit))
    names = [f.name() for f in fs[k:]]
    if names != expected_tail():
        fail("%s: callers %r, expected %r" % (where, names, expected_tail()))
    text = gdb.execute("bt", to_string=True)
    if "??" in text:
        fail("%s: '??' in backtrace:\n%s" % (where, text))
    return fs


def stop_pc():
    return int(gdb.parse_and_eval("$pc"))


def alive():
    inf = gdb.selected_inferior()
    return inf is not None and inf.pid != 0


def setup():
    gdb.execute("set pagination off")
    gdb.execute("set confirm off")
    gdb.execute("set width 0")
