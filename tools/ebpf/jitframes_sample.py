#!/usr/bin/python3
"""Sample a running process with eBPF and name its JIT frames from the
jitframes published region table.

The proof that an eBPF profiler (the OpenTelemetry one, ddprof, Parca) can
name generated code with nothing switched on in the process and no file.
Design (docs/formats.md, "The published region table"): at each sample the
BPF program reads the table's generation with one bpf_probe_read_user of its
header and records (pc, generation): no loop, so nothing for the verifier to
bound. The live array is in no order (so that registration is O(1) in any
address order), which rules out a binary search in the kernel. This tool's
user-space part reads the table from the process's memory (/proc/PID/mem,
ptrace rights) every time it polls (finding it again, and telling the BPF
program, when the library has doubled it into a new mapping), keeps every entry it has seen (live
ones with the generation they were published at, removed ones from the
ring with the generation they were removed at), and afterwards names each
sample by the region live at its generation: a JIT that freed the code and
reused the address since is never mistaken for it. tools/table_lookup.c is
the same in C (tr_sample_generation, tr_resolve), and the fuzzer's twin.
The ring holds the last 4096 removals: polling every 100 ms keeps up with
a JIT removing up to ~40,000 regions a second.

Usage: jitframes_sample.py PID [--samples N] [--freq HZ] [--max-seconds S] [-o FILE]
Prints one JSON object per sample of PID in user space:
  {"t": ns, "pc": int, "generation": int, "status": "found|not_found|unreadable",
   "name": str, "start": int, "size": int}
Needs root (or CAP_BPF + CAP_PERFMON); exits 77 when the kernel refuses BPF.
"""
import argparse
import bisect
import ctypes
import json
import os
import struct
import sys
import time

TABLE_NAMES = (" /memfd:jitframes-regions (deleted)", " [anon:jitframes-regions]")

BPF_TEXT = r"""
#include <uapi/linux/bpf_perf_event.h>
#include <linux/sched.h>

struct header_start {    /* pub_header, version 2 (src/pub_layout.h), up to the generation */
    char signature[8];
    u32 version, header_size, entry_size, flags;
    u64 generation;
};
enum { FOUND, UNREADABLE };
struct sample {
    u64 t, pc, generation;
    u32 status, pad;
};
BPF_PERF_OUTPUT(samples);
BPF_ARRAY(table_base, u64, 1);   /* set by user space; again when the table grows into a new mapping */

int on_sample(struct bpf_perf_event_data *ctx)
{
    u32 tgid = bpf_get_current_pid_tgid() >> 32;
    if (tgid != TARGET_TGID)
        return 0;
    u64 pc = PT_REGS_IP(&ctx->regs);
    if (pc >= 0x800000000000ULL)      /* in the kernel: not ours to name */
        return 0;
    struct sample s = {};
    s.t = bpf_ktime_get_ns();         /* CLOCK_MONOTONIC, like the table's times */
    s.pc = pc;
    s.status = UNREADABLE;
    int zero = 0;
    u64 *base = table_base.lookup(&zero);
    struct header_start h;
    if (base && *base && bpf_probe_read_user(&h, sizeof h, (void *)*base) == 0 && h.version == 2 &&
        h.entry_size == 96) {
        s.generation = h.generation;
        s.status = FOUND;
    }
    samples.perf_submit(ctx, &s, sizeof s);
    return 0;
}
"""

# src/pub_layout.h, version 2, in the target's (this machine's) byte order.
HEADER = struct.Struct("=8sIIIIQIIQQIIIIIIQQIIQ")
ENTRY = struct.Struct("=IIQQ10IQQQQ")
VERSION, LIVE, REMOVED = 2, 1, 2
# Bounds on what the (untrusted) target's table may make this tool read.
MAX_SLOTS, MAX_RING, MAX_HEAP, MAX_NAME = 1 << 20, 1 << 16, 256 << 20, 4096


class Table:
    """Every entry seen in the target's table, across reads: (start,
    published_gen) -> [size, name, removed_gen or None]."""

    def __init__(self, pid, base, size):
        self.pid, self.base, self.size = pid, base, size
        self.seen = {}
        self.reads = self.failed = 0

    def _read(self, mem, off, n):
        if off < 0 or n < 0 or off + n > self.size:
            raise ValueError("outside the mapping")
        mem.seek(self.base + off)
        data = mem.read(n)
        if len(data) != n:
            raise ValueError("short read")
        return data

    def read(self):
        """One read of the table; entries torn by a concurrent write are
        left for the next read. False if the table is unreadable."""
        try:
            with open(f"/proc/{self.pid}/mem", "rb", buffering=0) as mem:
                self._read_once(mem)
            self.reads += 1
            return True
        except (OSError, ValueError, struct.error):
            self.failed += 1
            return False

    def _read_once(self, mem):
        h = HEADER.unpack(self._read(mem, 0, HEADER.size))
        (sig, version, _hsize, esize, _flags, _gen, _pid, _clock, _created, map_size, entries_off, entries_cap,
         used, _live, ring_off, ring_cap, written, heap_off, heap_cap, heap_used, _dropped) = h
        if sig != b"JFREGTBL" or version != VERSION or esize != ENTRY.size or map_size != self.size:
            raise ValueError("not a version 2 table")
        if used > min(entries_cap, MAX_SLOTS) or ring_cap > MAX_RING or heap_used > min(heap_cap, MAX_HEAP):
            raise ValueError("table beyond bounds")
        slots = self._read(mem, entries_off, used * esize)
        ring_n = min(written, ring_cap)  # until it wraps, only the first entries hold removals
        ring = self._read(mem, ring_off, ring_n * esize)
        heap = self._read(mem, heap_off, heap_used)
        slots2 = self._read(mem, entries_off, used * esize)
        ring2 = self._read(mem, ring_off, ring_n * esize)
        for a, b in ((slots, slots2), (ring, ring2)):
            for i in range(0, len(a), esize):
                if a[i:i + esize] == b[i:i + esize]:
                    self._take(ENTRY.unpack_from(a, i), heap)

    def _take(self, e, heap):
        seq, flags, start, size, name_off, name_len = e[:6]
        published_gen, removed_gen = e[14], e[16]
        if seq & 1 or flags not in (LIVE, REMOVED) or size == 0:
            return
        n = min(name_len, MAX_NAME)
        if name_off + n > len(heap):
            return
        name = heap[name_off:name_off + n].decode("utf-8", "replace")
        name = "".join("?" if ord(c) < 0x20 or c == "\x7f" else c for c in name)
        entry = self.seen.setdefault((start, published_gen), [size, name, None])
        if flags == REMOVED:
            entry[2] = removed_gen

    def index(self):
        """start -> sorted [(published_gen, removed_gen or inf, size, name)]."""
        by_start = {}
        for (start, pub), (size, name, removed) in self.seen.items():
            by_start.setdefault(start, []).append((pub, removed if removed is not None else float("inf"), size,
                                                   name))
        for v in by_start.values():
            v.sort()
        return sorted(by_start), by_start

    @staticmethod
    def resolve(starts, by_start, pc, generation):
        """The region holding pc live at generation (odd: a change was under
        way: live just before it, else just after), or None."""
        gens = (generation,) if generation % 2 == 0 else (generation - 1, generation + 1)
        i = bisect.bisect_right(starts, pc)
        for g in gens:
            for j in range(i - 1, max(i - 17, -1), -1):  # nearest starts first, bounded
                for pub, removed, size, name in by_start[starts[j]]:
                    if pub <= g < removed and pc - starts[j] < size:
                        return starts[j], size, name
        return None




def holds_table(pid, lo, hi):
    """An unnamed mapping is the table if it starts with a header naming
    this process and this mapping's size (the signature is written last)."""
    try:
        with open(f"/proc/{pid}/mem", "rb", buffering=0) as mem:
            mem.seek(lo)
            h = HEADER.unpack(mem.read(HEADER.size))
    except (OSError, ValueError, struct.error):
        return False
    return h[0] == b"JFREGTBL" and h[6] == pid and h[9] == hi - lo


def find_table(pid):
    """The table's mapping from /proc/PID/maps (bounded: lines, count): the
    one named jitframes-regions, else an unnamed anonymous one holding the
    table (the library's fallback without memfd, on a kernel that cannot
    name mappings; at most 4096 probed), as tr_find_table does."""
    probes = 0
    found = None
    with open(f"/proc/{pid}/maps", "rb") as maps:
        for n, raw in enumerate(maps):
            if n > 4_000_000:
                break
            line = raw[:1024].decode("ascii", "replace").rstrip("\n")
            fields = line.split()
            lo, hi = (int(x, 16) for x in fields[0].split("-"))
            if any(line.endswith(name) for name in TABLE_NAMES):
                return lo, hi - lo
            unnamed = len(fields) == 5 and fields[1].startswith("rw") and fields[4] == "0"
            if not found and unnamed and probes < 4096:
                probes += 1
                if holds_table(pid, lo, hi):
                    found = lo, hi - lo
    return found


def debian_headers_tree(workdir):
    """When the running kernel has no headers (no /lib/modules/$(uname -r)/build,
    no kheaders), Debian's linux-headers-ARCH of another version joined into one
    tree: the program uses only stable interfaces (perf event data, pt_regs) and
    the running kernel's verifier checks what is loaded."""
    import glob
    import subprocess
    arch = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True).stdout.strip()
    trees = sorted(glob.glob(f"/usr/src/linux-headers-*-{arch}")) if arch else []
    if not trees or not os.path.isdir(trees[-1].rsplit("-", 1)[0] + "-common"):
        return None
    tree = os.path.join(workdir, "kernel")
    os.mkdir(tree)
    subprocess.run(["cp", "-rs", trees[-1].rsplit("-", 1)[0] + "-common/.", tree + "/"], check=True)
    subprocess.run(["cp", "-rsf", trees[-1] + "/.", tree + "/"], check=True)
    return tree


def load(text):
    """The BPF program, compiled against the running kernel's headers or
    Debian's (see debian_headers_tree); raises what bcc raised."""
    from bcc import BPF
    try:
        return BPF(text=text)
    except Exception:
        if os.environ.get("BCC_KERNEL_SOURCE"):
            raise
    import tempfile
    with tempfile.TemporaryDirectory() as work:
        tree = debian_headers_tree(work)
        if not tree:
            raise
        print(f"jitframes_sample: no headers for the running kernel; compiling against {tree}", file=sys.stderr)
        os.environ["BCC_KERNEL_SOURCE"] = tree
        return BPF(text=text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pid", type=int)
    ap.add_argument("--samples", type=int, default=1000, help="stop after this many samples of PID")
    ap.add_argument("--freq", type=int, default=997)
    ap.add_argument("--max-seconds", type=float, default=60.0, help="stop then even with fewer samples")
    ap.add_argument("-o", "--output", help="write the samples there (default: stdout)")
    args = ap.parse_args()
    table = find_table(args.pid)
    if not table:
        print(f"jitframes_sample: process {args.pid} has no published region table", file=sys.stderr)
        return 1
    try:
        from bcc import PerfType, PerfSWConfig
    except ImportError as e:
        print(f"jitframes_sample: SKIP: bcc is not installed ({e}; scripts/deps installs python3-bpfcc)",
              file=sys.stderr)
        return 77
    text = BPF_TEXT.replace("TARGET_TGID", str(args.pid))
    try:
        bpf = load(text)
        bpf.attach_perf_event(ev_type=PerfType.SOFTWARE, ev_config=PerfSWConfig.CPU_CLOCK,
                              fn_name="on_sample", sample_freq=args.freq)
    except Exception as e:  # the kernel refused: no BPF, lockdown, no privilege
        print(f"jitframes_sample: SKIP: the kernel refused the BPF program: {e}", file=sys.stderr)
        return 77
    got = 0
    pending = []
    table = Table(args.pid, table[0], table[1])

    def follow_table():
        """Read the table; when that fails because it moved (the library
        doubles it into a new mapping when full), find it again and tell
        the BPF program. False if there is no table to read."""
        if table.read():
            return True
        found = find_table(args.pid) if os.path.exists(f"/proc/{args.pid}") else None
        if not found or found == (table.base, table.size):
            return False
        table.base, table.size = found
        bpf["table_base"][ctypes.c_int(0)] = ctypes.c_uint64(table.base)
        return table.read()

    bpf["table_base"][ctypes.c_int(0)] = ctypes.c_uint64(table.base)
    table.read()
    print(f"jitframes_sample: sampling process {args.pid}, table at {table.base:#x}", file=sys.stderr)

    def on_event(cpu, data, size):
        nonlocal got
        s = bpf["samples"].event(data)
        got += 1
        pending.append((s.t, s.pc, s.generation, s.status))

    bpf["samples"].open_perf_buffer(on_event, page_cnt=64)
    deadline = time.monotonic() + args.max_seconds
    while got < args.samples and time.monotonic() < deadline:
        bpf.perf_buffer_poll(timeout=100)
        if not follow_table() and not os.path.exists(f"/proc/{args.pid}"):
            break
    bpf.perf_buffer_poll(timeout=0)
    follow_table()
    starts, by_start = table.index()
    out = open(args.output, "w") if args.output else sys.stdout
    named = 0
    for t, pc, generation, status in pending:
        hit = Table.resolve(starts, by_start, pc, generation) if status == 0 else None
        named += hit is not None
        json.dump({"t": t, "pc": pc, "generation": generation,
                   "status": "unreadable" if status else "found" if hit else "not_found",
                   "name": hit[2] if hit else "", "start": hit[0] if hit else 0, "size": hit[1] if hit else 0}, out)
        out.write("\n")
    out.flush()
    print(f"jitframes_sample: {got} samples, {named} named; {table.reads} reads of the table "
          f"({table.failed} failed), {len(table.seen)} regions seen", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
