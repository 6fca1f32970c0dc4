#!/usr/bin/python3
"""Sample a running process with eBPF and name its JIT frames from the
jitframes published region table, read in the kernel at sample time.

The proof that an eBPF profiler (the OpenTelemetry one, ddprof, Parca) can
name generated code with nothing switched on in the process and no file: at
each sample the BPF program reads the table's header and does a bounded
binary search over its live array with bpf_probe_read_user (docs/formats.md,
"Published region table"; tools/table_lookup.c is the same lookup in C, and
the fuzzer's). The lookup runs in the kernel because a name must be taken
while the region is live: a JIT that frees code and reuses the address would
make a later lookup name the wrong function. A pc not in the live array
(code removed just before the sample) is reported with the table's removal
count at that moment, to be resolved afterwards against the removed ring.

Usage: jitframes_sample.py PID [--samples N] [--freq HZ] [--max-seconds S] [-o FILE]
Prints one JSON object per sample of PID in user space:
  {"t": ns, "pc": int, "status": "found|not_found|busy|unreadable",
   "name": str, "start": int, "size": int, "generation": int, "ring_written": int}
Needs root (or CAP_BPF + CAP_PERFMON); exits 77 when the kernel refuses BPF.
"""
import argparse
import json
import os
import sys
import time

TABLE_NAMES = (" /memfd:jitframes-regions (deleted)", " [anon:jitframes-regions]")

BPF_TEXT = r"""
#include <uapi/linux/bpf_perf_event.h>
#include <linux/sched.h>

#define HALVINGS 32
#define WALK_BACK 16   /* JF_PUB_WALK_BACK */
#define NAME_MAX_ 64

struct header {          /* pub_header, version 1 (src/pub_layout.h) */
    char signature[8];
    u32 version, header_size, entry_size, flags;
    u64 generation;
    u32 pid, clock_id;
    u64 created_ns, map_size;
    u32 entries_off, entries_capacity, entries_used, live_count;
    u32 ring_off, ring_capacity;
    u64 ring_written, heap_off;
    u32 heap_capacity, heap_used;
    u64 dropped;
};
struct entry {           /* pub_entry */
    u32 seq, flags;
    u64 start, size;
    u32 name_off, name_len, file_off, file_len, line, lines_len;
    u64 removed_ns;
    u32 lines_off, reserved;
};
enum { FOUND, NOT_FOUND, BUSY, UNREADABLE };
struct sample {
    u64 t, pc, start, size, generation, ring_written;
    u32 status, pad;
    char name[NAME_MAX_];
};
BPF_PERF_OUTPUT(samples);
BPF_PERCPU_ARRAY(scratch, struct sample, 1);

int on_sample(struct bpf_perf_event_data *ctx)
{
    u32 tgid = bpf_get_current_pid_tgid() >> 32;
    if (tgid != TARGET_TGID)
        return 0;
    u64 pc = PT_REGS_IP(&ctx->regs);
    if (pc >= 0x800000000000ULL)      /* in the kernel: not ours to name */
        return 0;
    int zero = 0;
    struct sample *s = scratch.lookup(&zero);
    if (!s)
        return 0;
    __builtin_memset(s, 0, sizeof *s);
    s->t = bpf_ktime_get_ns();        /* CLOCK_MONOTONIC, like the table's times */
    s->pc = pc;
    s->status = UNREADABLE;
    struct header h;
    if (bpf_probe_read_user(&h, sizeof h, (void *)TABLE_BASE) || h.version != 1 || h.entry_size != 64 ||
        h.entries_used > h.entries_capacity)
        goto out;
    s->generation = h.generation;
    s->ring_written = h.ring_written;
    s->status = BUSY;
    if (h.generation & 1)
        goto out;
    u64 slots = TABLE_BASE + h.entries_off;
    /* Branch-free halvings: the verifier then walks 32 steps, not 2^32
     * paths. Addresses are below 2^63, so a difference's top bit is a
     * comparison; once lo == hi the steps change nothing. */
    u64 lo = 0, hi = h.entries_used;
    for (int i = 0; i < HALVINGS; i++) {
        u64 mid = lo + ((hi - lo) >> 1);
        u64 start = 0;
        if (bpf_probe_read_user(&start, sizeof start, (void *)(slots + mid * 64 + 8)))
            start = 0;
        u64 active = (lo - hi) >> 63;                 /* lo < hi */
        u64 at_or_before = ((pc - start) >> 63) ^ 1;  /* start <= pc */
        u64 up = active & at_or_before, down = active & (at_or_before ^ 1);
        lo += up * (mid + 1 - lo);
        hi -= down * (hi - mid);
    }
    s->status = NOT_FOUND;
    for (int back = 0; back < WALK_BACK; back++) {
        if (lo == 0)
            goto out;
        lo--;
        struct entry e;
        u64 at = slots + (u64)lo * 64;
        if (bpf_probe_read_user(&e, sizeof e, (void *)at)) {
            s->status = UNREADABLE;
            goto out;
        }
        if (e.seq & 1) {
            s->status = BUSY;
            goto out;
        }
        if (e.flags != 1)
            continue;
        if (pc < e.start || pc - e.start >= e.size)   /* both bounds: the entry may have changed */
            goto out;
        u32 n = e.name_len < NAME_MAX_ - 1 ? e.name_len : NAME_MAX_ - 1;
        if (e.name_off > h.heap_capacity ||
            bpf_probe_read_user_str(s->name, n + 1, (void *)(TABLE_BASE + h.heap_off + e.name_off)) < 0) {
            s->status = UNREADABLE;
            goto out;
        }
        u32 seq;
        if (bpf_probe_read_user(&seq, sizeof seq, (void *)at) || seq != e.seq) {
            s->status = BUSY;
            goto out;
        }
        s->start = e.start;
        s->size = e.size;
        s->status = FOUND;
        goto out;
    }
out:
    samples.perf_submit(ctx, s, sizeof *s);
    return 0;
}
"""

STATUS = ("found", "not_found", "busy", "unreadable")


def find_table(pid):
    """The table's mapping from /proc/PID/maps (bounded: lines, count)."""
    with open(f"/proc/{pid}/maps", "rb") as maps:
        for n, raw in enumerate(maps):
            if n > 4_000_000:
                break
            line = raw[:1024].decode("ascii", "replace").rstrip("\n")
            if any(line.endswith(name) for name in TABLE_NAMES):
                lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
                return lo, hi - lo
    return None


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
    text = BPF_TEXT.replace("TARGET_TGID", str(args.pid)).replace("TABLE_BASE", f"{table[0]:#x}ULL")
    try:
        bpf = load(text)
        bpf.attach_perf_event(ev_type=PerfType.SOFTWARE, ev_config=PerfSWConfig.CPU_CLOCK,
                              fn_name="on_sample", sample_freq=args.freq)
    except Exception as e:  # the kernel refused: no BPF, lockdown, no privilege
        print(f"jitframes_sample: SKIP: the kernel refused the BPF program: {e}", file=sys.stderr)
        return 77
    got = 0
    out = open(args.output, "w") if args.output else sys.stdout
    print(f"jitframes_sample: sampling process {args.pid}, table at {table[0]:#x}", file=sys.stderr)

    def on_event(cpu, data, size):
        nonlocal got
        s = bpf["samples"].event(data)
        got += 1
        json.dump({"t": s.t, "pc": s.pc, "status": STATUS[s.status] if s.status < 4 else "unreadable",
                   "name": s.name.decode("utf-8", "replace"), "start": s.start, "size": s.size,
                   "generation": s.generation, "ring_written": s.ring_written}, out)
        out.write("\n")

    bpf["samples"].open_perf_buffer(on_event, page_cnt=64)
    deadline = time.monotonic() + args.max_seconds
    while got < args.samples and time.monotonic() < deadline:
        bpf.perf_buffer_poll(timeout=100)
        if not os.path.exists(f"/proc/{args.pid}"):
            break
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
