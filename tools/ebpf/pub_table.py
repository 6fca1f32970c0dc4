"""The published region table as Python sees it (src/pub_layout.h, version 2;
docs/formats.md, "The published region table"): its layout, finding it in a
process, and the bounded reads jitframes_sample.py makes itself. The one
place the layout is written in Python: fuzz/make_table_corpus.py imports it.
Everything else about a table comes from the C reader (`jitframes regions
PID --json`).
"""
import struct

# In the target's (this machine's) byte order.
HEADER = struct.Struct("=8sIIIIQIIQQIIIIIIQQIIQ")
ENTRY = struct.Struct("=IIQQ10IQQQQ")
SIGNATURE, VERSION, EMPTY, LIVE, REMOVED = b"JFREGTBL", 2, 0, 1, 2
# Header fields by position in HEADER.
H_SIG, H_VERSION, H_ESIZE, H_GEN, H_PID, H_MAP_SIZE = 0, 1, 3, 5, 6, 9
H_RING_OFF, H_RING_CAP, H_RING_WRITTEN, H_HEAP_OFF, H_HEAP_USED = 14, 15, 16, 17, 19
# Entry fields by position in ENTRY.
E_SEQ, E_FLAGS, E_START, E_SIZE, E_NAME_OFF, E_NAME_LEN, E_PUB_GEN, E_REMOVED_GEN = 0, 1, 2, 3, 4, 5, 14, 16
# Bounds on what the (untrusted) target's table may make a reader read.
MAX_RING, MAX_NAME, MAX_MAPS_LINES, MAX_PROBES = 1 << 16, 4096, 4_000_000, 4096
TABLE_NAMES = (" /memfd:jitframes-regions (deleted)", " [anon:jitframes-regions]")
SYMBOL = b"jf_region_table"


def pread(mem, at, n):
    """n bytes of the target's memory at address at; ValueError if short."""
    mem.seek(at)
    data = mem.read(n)
    if len(data) != n:
        raise ValueError("short read")
    return data


def read_header(mem, base, pid):
    """The header at base, checked (signature, version, entry size, pid); ValueError if not a table."""
    h = HEADER.unpack(pread(mem, base, HEADER.size))
    if h[H_SIG] != SIGNATURE or h[H_VERSION] != VERSION or h[H_ESIZE] != ENTRY.size or h[H_PID] != pid:
        raise ValueError("not a version 2 table of this process")
    return h


def read_ring(mem, base, h, since):
    """The regions removed since the since-th removal, from the ring of the
    table at base with header h: ({(start, published_gen): (size, name,
    removed_gen)}, removals so far, removals lost: the ring had wrapped
    over them, before or during this read). The new slots (at most
    MAX_RING), the names they point at (close ones in one read), the slots
    again: entries that changed in between are left out."""
    ring_off, ring_cap, written = h[H_RING_OFF], h[H_RING_CAP], h[H_RING_WRITTEN]
    heap_off, heap_used, map_size = h[H_HEAP_OFF], h[H_HEAP_USED], h[H_MAP_SIZE]
    if ring_cap > MAX_RING or ring_off + ring_cap * ENTRY.size > map_size or heap_off + heap_used > map_size:
        raise ValueError("ring or heap beyond the mapping")
    since = min(since, written)
    first = max(since, written - ring_cap)
    runs = []  # (slot, count): the new slots, at most two runs
    at, left = first % ring_cap if ring_cap else 0, written - first
    while left > 0:
        n = min(left, ring_cap - at)
        runs.append((at, n))
        at, left = 0, left - n

    def slots():
        return b"".join(pread(mem, base + ring_off + at * ENTRY.size, n * ENTRY.size) for at, n in runs)

    before = slots()
    entries = [ENTRY.unpack_from(before, i) for i in range(0, len(before), ENTRY.size)]
    wanted = [(i, e) for i, e in enumerate(entries) if not e[E_SEQ] & 1 and e[E_FLAGS] == REMOVED and e[E_SIZE]
              and e[E_NAME_OFF] + min(e[E_NAME_LEN], MAX_NAME) <= heap_used]
    names = read_spans(mem, base + heap_off, [(e[E_NAME_OFF], min(e[E_NAME_LEN], MAX_NAME)) for _, e in wanted])
    after = slots()
    # Removals the writer made meanwhile took the slots of the oldest ones
    # read: a slot that changed between the two reads is left out below, one
    # overwritten before the first holds a removal newer than the header
    # (kept: the next read starts at written anyway); either way the
    # removal that was there is lost, and counted.
    size = ENTRY.size
    overwritten = sum(1 for i, e in enumerate(entries) if before[i * size:(i + 1) * size] !=
                      after[i * size:(i + 1) * size] or e[E_REMOVED_GEN] > h[H_GEN])
    found = {}
    for (i, e), name in zip(wanted, names):
        if before[i * ENTRY.size:(i + 1) * ENTRY.size] == after[i * ENTRY.size:(i + 1) * ENTRY.size]:
            found[(e[E_START], e[E_PUB_GEN])] = (e[E_SIZE], printable(name.decode("utf-8", "replace")),
                                                 e[E_REMOVED_GEN])
    return found, written, first - since + overwritten


def read_spans(mem, base, pieces, gap=4096):
    """The bytes of each (offset, length) piece from base: pieces closer
    than gap are read together."""
    order = sorted(range(len(pieces)), key=lambda k: pieces[k][0])
    out = [b""] * len(pieces)
    k = 0
    while k < len(order):
        lo = pieces[order[k]][0]
        hi, j = lo + pieces[order[k]][1], k + 1
        while j < len(order) and pieces[order[j]][0] <= hi + gap:
            hi = max(hi, pieces[order[j]][0] + pieces[order[j]][1])
            j += 1
        data = pread(mem, base + lo, hi - lo)
        for m in order[k:j]:
            off, n = pieces[m]
            out[m] = data[off - lo:off - lo + n]
        k = j
    return out


def printable(name):
    """A name with control characters shown as '?'."""
    return "".join("?" if ord(c) < 0x20 or 0x7f <= ord(c) < 0xa0 else c for c in name)


def holds_table(pid, lo, hi):
    """An unnamed mapping is the table if it starts with a header naming
    this process and this mapping's size (the signature is written last)."""
    try:
        with open(f"/proc/{pid}/mem", "rb", buffering=0) as mem:
            return read_header(mem, lo, pid)[H_MAP_SIZE] == hi - lo
    except (OSError, ValueError, struct.error):
        return False


def maps(pid):
    """(lo, hi, fields, line) of each line of /proc/PID/maps (bounded)."""
    with open(f"/proc/{pid}/maps", "rb") as f:
        for n, raw in enumerate(f):
            if n > MAX_MAPS_LINES:
                return
            line = raw[:1024].decode("ascii", "replace").rstrip("\n")
            fields = line.split()
            lo, hi = (int(x, 16) for x in fields[0].split("-"))
            yield lo, hi, fields, line


def find_table(pid):
    """(address, size) of the table's mapping from /proc/PID/maps: the one
    named jitframes-regions, else an unnamed anonymous one holding the
    table (on a kernel that cannot name anonymous mappings; at most
    MAX_PROBES probed), as tr_find_table does."""
    probes = 0
    found = None
    for lo, hi, fields, line in maps(pid):
        if any(line.endswith(name) for name in TABLE_NAMES):
            return lo, hi - lo
        unnamed = len(fields) == 5 and fields[1].startswith("rw") and fields[4] == "0"
        if not found and unnamed and probes < MAX_PROBES:
            probes += 1
            if holds_table(pid, lo, hi):
                found = lo, hi - lo
    return found
