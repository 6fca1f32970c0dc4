#!/usr/bin/python3
"""Write fuzz/corpus-table: seeds for fuzz_table (fuzz_table.c: byte 0 =
reads before the "target" changes, bytes 1-8 = a pc, then the mapping), each
a small version 2 table (src/pub_layout.h) in this machine's byte order.
Usage: make_table_corpus.py DIR"""
import os
import struct
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ in tools/ebpf
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools", "ebpf"))
from pub_table import ENTRY, HEADER  # noqa: E402  the layout, written once in Python
BASE = 0x100000  # where fuzz_table maps the input
CAP = RING = 4
ENTRIES_OFF, RING_OFF = 128, 128 + CAP * 96
HEAP_OFF = RING_OFF + RING * 96
HEAP_CAP = 256
SIZE = HEAP_OFF + HEAP_CAP
CODE = 0x7f0000001000

# An unwind description (jf__pub_cfi): x86-64 CIE (CFA rsp+8, ra at cfa-8), one
# FDE [0, 16): advance 1, CFA offset 16.
CIE = bytes([0x0c, 0x07, 0x08, 0x90, 0x01])
FDE = bytes([0x41, 0x0e, 0x10])
CFI = struct.pack("=IiIII", 1, -8, 16, len(CIE), 1) + CIE + struct.pack("=III", 0, 16, len(FDE)) + FDE


def entry(seq=2, flags=1, start=CODE, size=64, name=(0, 5), file=(0, 0), line=0, cfi=(0, 0), pub_gen=2,
          pub_ns=1000, removed_gen=0, removed_ns=0):
    return ENTRY.pack(seq, flags, start, size, name[0], name[1], file[0], file[1], line, 0, 0, cfi[1], cfi[0], 0,
                      pub_gen, pub_ns, removed_gen, removed_ns)


def table(live=(), ring=(), heap=b"", generation=4, used=None, ring_written=None):
    m = bytearray(SIZE)
    m[0:HEADER.size] = HEADER.pack(b"JFREGTBL", 2, 128, 96, 0, generation, 1234, 1, 0, SIZE, ENTRIES_OFF, CAP,
                                   len(live) if used is None else used, len(live), RING_OFF, RING,
                                   len(ring) if ring_written is None else ring_written, HEAP_OFF, HEAP_CAP,
                                   len(heap), 0)
    for i, e in enumerate(live):
        m[ENTRIES_OFF + i * 96:ENTRIES_OFF + (i + 1) * 96] = e
    for i, e in enumerate(ring):
        m[RING_OFF + i * 96:RING_OFF + (i + 1) * 96] = e
    m[HEAP_OFF:HEAP_OFF + len(heap)] = heap
    return bytes(m)


def seed(reads, pc, mapping):
    return bytes([reads]) + struct.pack("=Q", pc) + mapping


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    heap = b"alpha\0beta\0file.lua\0" + CFI
    cfi_at = len(b"alpha\0beta\0file.lua\0")
    good = table(live=[entry(start=CODE + 128, name=(6, 4), pub_gen=4),
                       entry(name=(0, 5), file=(11, 8), line=7, cfi=(cfi_at, len(CFI)))],
                 ring=[entry(flags=2, start=CODE + 256, name=(6, 4), pub_gen=2, removed_gen=4, removed_ns=2000)],
                 heap=heap)
    seeds = {
        "good": seed(255, CODE + 8, good),
        "empty": seed(255, CODE, table()),
        "odd-generation": seed(255, CODE + 8, table(live=[entry()], heap=heap, generation=5)),
        "torn-entry": seed(255, CODE + 8, table(live=[entry(seq=3)], heap=heap)),
        "name-outside-heap": seed(255, CODE + 8, table(live=[entry(name=(250, 100))], heap=heap)),
        "used-beyond-capacity": seed(255, CODE + 8, table(live=[entry()], heap=heap, used=CAP + 1)),
        "cfi-truncated": seed(255, CODE + 8, table(live=[entry(cfi=(cfi_at, len(CFI) - 2))], heap=heap)),
        "cfi-huge-fde-count": seed(255, CODE + 8, table(
            live=[entry(cfi=(cfi_at, len(CFI)))],
            heap=heap[:cfi_at] + CFI[:16] + struct.pack("=I", 0xffffffff) + CFI[20:])),
        "cfi-fde-past-region": seed(255, CODE + 8, table(live=[entry(size=8, cfi=(cfi_at, len(CFI)))], heap=heap)),
    }
    for n in (3, 6, 9):
        seeds[f"good-changes-after-{n}-reads"] = seed(n, CODE + 130, good)
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
