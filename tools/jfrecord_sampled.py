"""The regions a recording can name: `jitframes record --via memory` keeps
in its jitdump only the CODE_LOADs some sample may fall in.

perf inject --jit writes one jitted-PID-N.so per CODE_LOAD, and creating
that many files is most of its time (a 20,000-region churning process:
tens of seconds, mostly the file system allocating inodes), though most
regions of a churning JIT are never sampled. A region is kept when an
address a sample holds lies in it and it was the latest load covering that
address at the sample's time (so perf would give it that address): the
sampled IP, every callchain entry (frame pointers), and every aligned
8-byte word of the sampled user stack (DWARF call graphs: the return
addresses into JIT callers are among them, so their regions and unwind
data stay). A superset, never a loss. Whatever this cannot read (another
sample layout, several event layouts, more candidate regions at one
address than it looks at) keeps every region.
"""
import bisect
import struct

import jfrecord_inject as ji

S_ADDR, S_READ, S_CALLCHAIN, S_PERIOD = 8, 16, 32, 256
S_RAW, S_BRANCH_STACK, S_REGS_USER, S_STACK_USER = 1 << 10, 1 << 11, 1 << 12, 1 << 13
# Fields before the user stack this cannot read past (the later ones are
# not read at all).
UNREAD = S_READ | S_BRANCH_STACK
JD_CODE_LOAD, JD_HEADER = 0, struct.Struct("=IIIIIIQQ")
JD_PREFIX, JD_LOAD = struct.Struct("=IIQ"), struct.Struct("=IIQQQQ")
LOOKS_MAX = 256  # starts looked at below one address


class Unknown(Exception):
    """Something this does not read: keep every region."""


def _attrs(f, h):
    """(sample_type, number of user registers) shared by every event."""
    attr_size, offset, size = h[2], h[3], h[4]
    if attr_size < 96 + 16 or size < attr_size:
        raise Unknown()
    layouts = set()
    for at in range(offset, offset + size - attr_size + 1, attr_size):
        f.seek(at)
        entry = f.read(attr_size)
        sample_type = struct.unpack_from("<Q", entry, 24)[0]
        regs = bin(struct.unpack_from("<Q", entry, 80)[0]).count("1")
        layouts.add((sample_type, regs))
    if len(layouts) != 1:
        raise Unknown()
    return layouts.pop()


def _skip(body, at, n):
    at += n
    if at > len(body):
        raise Unknown()
    return at


def _u64(body, at):
    if at + 8 > len(body):
        raise Unknown()
    return struct.unpack_from("<Q", body, at)[0], at + 8


def sample_addresses(body, sample_type, regs, lo, hi):
    """(time, addresses in [lo, hi)) of one SAMPLE record's body."""
    if sample_type & UNREAD:
        raise Unknown()
    at, t, found = 0, 0, set()
    at = _skip(body, at, 8) if sample_type & ji.S_IDENTIFIER else at
    if sample_type & ji.S_IP:
        ip, at = _u64(body, at)
        found.add(ip)
    at = _skip(body, at, 8) if sample_type & ji.S_TID else at
    if sample_type & ji.S_TIME:
        t, at = _u64(body, at)
    for bit in (S_ADDR, ji.S_ID, ji.S_STREAM_ID, ji.S_CPU, S_PERIOD):
        at = _skip(body, at, 8) if sample_type & bit else at
    if sample_type & S_CALLCHAIN:
        n, at = _u64(body, at)
        end = _skip(body, at, 8 * n)
        found.update(struct.unpack_from("<%dQ" % n, body, at))
        at = end
    if sample_type & S_RAW:
        if at + 4 > len(body):
            raise Unknown()
        at = _skip(body, at + 4, struct.unpack_from("<I", body, at)[0])
    if sample_type & S_REGS_USER:
        abi, at = _u64(body, at)
        at = _skip(body, at, 8 * regs) if abi else at
    if sample_type & S_STACK_USER:
        size, at = _u64(body, at)
        if size:
            dyn = struct.unpack_from("<Q", body, _skip(body, at, size))[0] if at + size + 8 <= len(body) else 0
            stack = memoryview(body)[at:at + min(size, dyn) // 8 * 8].cast("Q")
            found.update(w for w in stack if lo <= w < hi)
    return t, {a for a in found if lo <= a < hi}


def _loads(dump):
    """[(offset, end, ts, addr, size)] of the jitdump's CODE_LOADs; the
    header's size."""
    header = JD_HEADER.unpack_from(dump, 0)
    at, loads = header[2], []
    while at + JD_PREFIX.size <= len(dump):
        rid, size, ts = JD_PREFIX.unpack_from(dump, at)
        if size < JD_PREFIX.size or at + size > len(dump):
            raise Unknown()
        if rid == JD_CODE_LOAD:
            _, _, _, addr, code_size, _ = JD_LOAD.unpack_from(dump, at + JD_PREFIX.size)
            loads.append((at, at + size, ts, addr, code_size))
        at += size
    return header[2], loads


class Loads:
    """The dump's loads by start address, each start's by time."""

    def __init__(self, loads):
        by_start = {}
        for i, (_, _, ts, addr, size) in enumerate(loads):
            by_start.setdefault(addr, []).append((ts, size, i))
        self.starts = sorted(by_start)
        self.at = [sorted(by_start[s]) for s in self.starts]
        self.times = [[ts for ts, _, _ in v] for v in self.at]
        self.longest = max((size for _, _, _, _, size in loads), default=0)

    def mark(self, t, a, used):
        """Add to used each start's latest load at or before t covering a
        (a later, shorter load at the same start leaves the rest of an
        earlier one mapped)."""
        i, looks = bisect.bisect_right(self.starts, a) - 1, 0
        while i >= 0 and self.starts[i] + self.longest > a:
            j = bisect.bisect_right(self.times[i], t) - 1
            while j >= 0 and a >= self.starts[i] + self.at[i][j][1]:
                j -= 1
                looks += 1
            if j >= 0:
                used.add(self.at[i][j][2])
            looks += 1
            if looks > LOOKS_MAX:
                raise Unknown()
            i -= 1


def sampled_loads(perf_data, loads):
    """Indices of the loads some sample of perf_data (an open file) may fall in."""
    h = ji._header(perf_data)
    sample_type, regs = _attrs(perf_data, h)
    index = Loads(loads)
    lo = min((addr for _, _, _, addr, _ in loads), default=0)
    hi = max((addr + size for _, _, _, addr, size in loads), default=0)
    used = set()
    for (rtype, _, _), body in ji._records(perf_data, h[5], h[6]):
        if rtype == ji.SAMPLE:
            t, found = sample_addresses(body, sample_type, regs, lo, hi)
            for a in found:
                index.mark(t, a, used)
    return used


def keep_sampled(src, dst, perf_data):
    """Copy jitdump src to dst (open files) with only the CODE_LOADs some
    sample may fall in, each with the records before it (its unwind and
    line data); every one when the recording cannot be read. (kept, all)."""
    dump = src.read()
    try:
        header_size, loads = _loads(dump)
        used = sampled_loads(perf_data, loads)
    except (Unknown, ji.InjectError, struct.error, ValueError):
        dst.write(dump)
        return None, None
    dst.write(dump[:header_size])
    begin = header_size
    for i, (_, end, _, _, _) in enumerate(loads):
        if i in used:
            dst.write(dump[begin:end])
        begin = end
    dst.write(dump[begin:])
    return len(used), len(loads)
