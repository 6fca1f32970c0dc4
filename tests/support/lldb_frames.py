"""Parsing lldb's `bt` output, for the debugger tests of several areas."""
import re
import sys


def lldb_frames(out):
    """[(name, location, address, module)] of `bt`, innermost first: every
    frame line is parsed (an unparsed one fails the test)."""
    frames = []
    for line in out.splitlines():
        if not re.match(r"\s*\*?\s*frame #\d+: ", line):
            continue
        m = re.match(r"\s*\*?\s*frame #\d+: (0x[0-9a-f]+)(?: (\S+?)`(.*))?$", line)
        if not m:
            sys.exit("FAIL: cannot parse lldb's frame line %r" % line)
        if not m.group(2):  # no module, no symbol
            frames.append(("??", "", int(m.group(1), 16), ""))
            continue
        rest = m.group(3)
        name = re.split(r"[ (]", rest, maxsplit=1)[0]
        at = re.search(r" at (\S+)$", rest)
        frames.append((name, at.group(1) if at else "", int(m.group(1), 16), m.group(2)))
    return frames
