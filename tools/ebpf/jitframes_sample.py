#!/usr/bin/python3
"""Sample a running process with eBPF and name its JIT frames from the
jitframes published region table, with nothing switched on in the process
and no file.

The proof that an eBPF profiler (the OpenTelemetry one, ddprof, Parca) can
name generated code. Design (docs/formats.md, "The published region table"):
at each sample the BPF program reads the exported pointer jf_region_table
(where the table is now: the library grows it eightfold into a new mapping
when full) and the generation in the table's header, two bounded
bpf_probe_read_user and no loop, and records (pc, generation). The live
array is in no order (registration is O(1) in any address order), which
rules out a binary search in the kernel. User space reads the table with
the C reader (`jitframes regions PID --json`, in a child process, over and
over) and, every 50 ms in a thread of its own, the ring of the last
removals (16,384, 32,768 once the table has grown to 1,048,576 slots: a JIT
removing up to ~80,000 regions a second loses none while a large table is
read, nor one removing 20,000 a second while the sampler stalls 1.5 s); it names each sample by the region live at
its generation (a JIT that freed the code and reused the address since is
never mistaken for it) once a read that began at or after that generation
is in, and forgets removed regions no sample can need (beyond 2 *
MAX_REMOVED, the oldest that only samples not yet taken could need): what
it remembers stays under twice the table's live regions plus 2 *
MAX_REMOVED plus one per pending sample (printed at the end as "regions
seen at most"). tools/readers/table_lookup.c is the same naming in C.

Usage: jitframes_sample.py PID [--samples N] [--freq HZ] [--max-seconds S] [-o FILE] [--jitframes CLI]
Prints one JSON object per sample of PID in user space:
  {"t": ns, "pc": int, "generation": int, "status": "found|not_found|unreadable",
   "name": str, "start": int, "size": int}
Needs root (or CAP_BPF + CAP_PERFMON) and the jitframes CLI (on PATH, or
--jitframes); exits 77 when the kernel refuses BPF.
"""
import argparse
import bisect
import collections
import ctypes
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True  # run from a source tree, often by root: leave no __pycache__ in it
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import elf_symbol  # noqa: E402
import pub_table  # noqa: E402

BPF_TEXT = r"""
#include <uapi/linux/bpf_perf_event.h>
#include <linux/sched.h>

struct header_start {    /* jf__pub_header, version 2 (src/pub_layout.h), up to the generation */
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
/* Set by user space: [0] the address of jf_region_table in the target, or 0
 * when it has none; then [1] is the table's address (set again when it moves). */
BPF_ARRAY(where, u64, 2);

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
    int zero = 0, one = 1;
    u64 *symbol = where.lookup(&zero), *fixed = where.lookup(&one);
    u64 base = 0;
    if (symbol && *symbol) {          /* where the table is now: a growth costs no sample */
        if (bpf_probe_read_user(&base, sizeof base, (void *)*symbol) != 0)
            base = 0;
    } else if (fixed) {
        base = *fixed;
    }
    struct header_start h;
    if (base && bpf_probe_read_user(&h, sizeof h, (void *)base) == 0 && h.version == 2 &&
        h.entry_size == 96) {
        s.generation = h.generation;
        s.status = FOUND;
    }
    samples.perf_submit(ctx, &s, sizeof s);
    return 0;
}
"""

INF = float("inf")
MAX_REMOVED = 1 << 15  # removed regions kept by forget (twice that between two): the oldest go first
RING_PERIOD = 0.05     # s between reads of the ring: 4096 removals in 50 ms is 80,000 a second (the smallest ring)
READ_TIMEOUT = 60.0    # s a read by the C reader may take (it gives up after 10 s itself)


class Known:
    """What the sampler remembers of the target's regions:
    (start, published_gen) -> [size, name, removed_gen or None, seen, evict, exact, published_gen]
    (by_start: start -> ([published_gen...], [those lists]) in published order):
    seen is the generation the last read that listed it live began at;
    evict orders forgetting: its removal when known exactly (from the ring),
    else when it was last seen live (a read did not list it: removed, with
    the ring wrapped since, or torn in a read that was not consistent; a
    later read that lists it again brings it back). Removed regions are
    forgotten once no sample can need them (forget, after each read), and
    beyond max_removed the oldest first, also whenever more than twice
    max_removed are held: at most the regions listed live by two reads (the
    last and the one being merged), 2 * max_removed, and one per pending
    sample are remembered."""

    def __init__(self, max_removed=MAX_REMOVED):
        self.entries, self.by_start, self.starts = {}, {}, []
        self.sorted = True
        self.max_removed, self.most, self.n_removed, self.floor = max_removed, 0, 0, 0
        self.pending = list

    def add(self, key, size, name, removed=None, seen=0):
        e = self.entries.get(key)
        if e is None:
            e = self.entries[key] = [size, name, removed, seen, removed or 0, removed is not None, key[1]]
            if key[0] not in self.by_start:
                self.by_start[key[0]], self.sorted = ([], []), False
            pubs, at = self.by_start[key[0]]
            i = bisect.bisect_right(pubs, key[1])
            pubs.insert(i, key[1])
            at.insert(i, e)
            self.most = max(self.most, len(self.entries))
            self.n_removed += removed is not None
        elif removed is not None:
            self.n_removed += e[2] is None
            e[2] = e[4] = removed
            e[5] = True
        elif not e[5] and seen > e[3] and e[2] is not None:
            e[2] = None  # live after all
            self.n_removed -= 1
        e[3] = max(e[3], seen)
        if self.n_removed > 2 * self.max_removed:
            self.forget()

    def listed(self, began, region):
        """A region (start, size, name, published_gen, removed_gen or None)
        listed by a read of the C reader begun at generation began."""
        start, size, name, pub, removed = region
        self.add((start, pub), size, name, removed, began if removed is None else 0)

    def sweep(self, began, gen_after):
        """After a whole read begun at generation began: regions it did not
        list were removed by gen_after (an upper bound), or torn in it."""
        for e in self.entries.values():
            if e[2] is None and e[3] < began:
                e[2], e[4] = gen_after, e[3]
                self.n_removed += 1

    def forget(self, floor=None):
        """Drop removed regions that neither a sample not yet taken (at
        generation >= floor) nor a pending one (self.pending(): (t, pc,
        generation)) can need, then the oldest beyond max_removed of those
        only later samples could need."""
        self.floor = self.floor if floor is None else floor
        needed = {hit[:2] for hit in (self._find(pc, g) for _, pc, g in self.pending()) if hit}
        removed = sorted((e[4], e[2], key) for key, e in self.entries.items()
                         if e[2] is not None and (key[0], e[6]) not in needed)
        kept = [key for _, r, key in removed if r > self.floor]
        gone = [key for _, r, key in removed if r <= self.floor] + kept[:max(0, len(kept) - self.max_removed)]
        self.n_removed = len(removed) - len(gone) + len(needed)
        for key in gone:
            del self.entries[key]
        for start in {key[0] for key in gone}:
            pubs, at = self.by_start[start]
            left = [e for e in at if (start, e[6]) in self.entries]
            if left:
                self.by_start[start] = ([e[6] for e in left], left)
            else:
                del self.by_start[start]
                self.sorted = False

    def resolve(self, pc, generation):
        """(start, size, name) of the region holding pc live at generation
        (odd: a change was under way: live just before it, else just
        after), or None; the newest published wins."""
        hit = self._find(pc, generation)
        return (hit[0], hit[2], hit[3]) if hit else None

    def _find(self, pc, generation):
        """(start, published_gen, size, name) for resolve."""
        if not self.sorted:
            self.starts, self.sorted = sorted(self.by_start), True
        gens = (generation,) if generation % 2 == 0 else (generation - 1, generation + 1)
        i = bisect.bisect_right(self.starts, pc)
        for g in gens:
            best = None
            for j in range(i - 1, max(i - 17, -1), -1):  # nearest starts first, bounded
                start = self.starts[j]
                pubs, at = self.by_start.get(start, ((), ()))
                k = bisect.bisect_right(pubs, g)
                for size, name, removed, _, _, _, pub in at[max(k - 4, 0):k]:  # the newest published by g
                    if g < (INF if removed is None else removed) and pc - start < size and (
                            best is None or pub > best[0]):
                        best = pub, start, size, name
            if best:
                return best[1], best[0], best[2], best[3]
        return None


class Target:
    """Where the target's table is: through jf_region_table when the
    process exports it (the BPF program reads it at each sample), else its
    mapping in /proc/PID/maps (found again when it moves; the BPF program
    told)."""

    def __init__(self, pid):
        self.pid, self.symbol, self.base, self.on_move = pid, 0, 0, None
        found = pub_table.find_table(pid)
        self.base = found[0] if found else 0
        with open(f"/proc/{pid}/mem", "rb", buffering=0) as mem:
            for at in elf_symbol.symbol_addresses(pid, pub_table.SYMBOL):
                if self._pointer(mem, at) == self.base:  # the copy of jitframes that made the table
                    self.symbol = at
                    break

    @staticmethod
    def _pointer(mem, at):
        try:
            return struct.unpack("=Q", pub_table.pread(mem, at, 8))[0]
        except (OSError, ValueError):
            return None

    def header(self, mem):
        """(base, header) of the table now; ValueError if there is none."""
        if self.symbol:
            base = self._pointer(mem, self.symbol)
            if not base:
                raise ValueError("no table")
            return base, pub_table.read_header(mem, base, self.pid)
        try:
            return self.base, pub_table.read_header(mem, self.base, self.pid)
        except (OSError, ValueError, struct.error):
            found = pub_table.find_table(self.pid)
            if not found or found[0] == self.base:
                raise ValueError("no table")
            self.base = found[0]
            if self.on_move:
                self.on_move(self.base)
            return self.base, pub_table.read_header(mem, self.base, self.pid)


class RingWatcher(threading.Thread):
    """Reads the removals added to the table's ring every RING_PERIOD and
    hands them over (take); counts those the ring wrapped over unseen."""

    def __init__(self, target):
        super().__init__(daemon=True)
        self.target, self.lock, self.stop = target, threading.Lock(), threading.Event()
        self.found, self.written, self.reads, self.failed, self.lost = {}, None, 0, 0, 0

    def read_once(self, mem):
        base, h = self.target.header(mem)
        if self.written is None:  # the first read: what the ring still holds; earlier removals are no loss
            self.written = max(h[pub_table.H_RING_WRITTEN] - h[pub_table.H_RING_CAP], 0)
        found, written, lost = pub_table.read_ring(mem, base, h, self.written)
        with self.lock:
            self.found.update(found)
            self.written, self.lost, self.reads = written, self.lost + lost, self.reads + 1

    def read_now(self):
        """One read more, in the caller's thread (the watcher stopped)."""
        try:
            with open(f"/proc/{self.target.pid}/mem", "rb", buffering=0) as mem:
                self.read_once(mem)
        except (OSError, ValueError, struct.error):
            self.failed += 1

    def run(self):
        try:
            with open(f"/proc/{self.target.pid}/mem", "rb", buffering=0) as mem:
                while not self.stop.wait(RING_PERIOD):
                    try:
                        self.read_once(mem)
                    except (OSError, ValueError, struct.error):
                        self.failed += 1
        except OSError:
            self.failed += 1

    def take(self):
        with self.lock:
            found, self.found = self.found, {}
            return found


def region(d):
    """A region object of `regions --json` as (start, size, name, published_gen, removed_gen or None)."""
    return (int(d["start"]), int(d["size"]), pub_table.printable(str(d["name"]))[:pub_table.MAX_NAME],
            int(d["published_gen"]), int(d["removed_gen"]) if "removed_gen" in d else None)


class Reader:
    """`jitframes regions PID --json` in a child process, again and again:
    poll() gives each finished read (its JSON parsed), start() the next."""

    def __init__(self, cli, pid):
        self.cli, self.pid, self.child, self.out, self.err, self.began = cli, pid, None, None, None, 0.0
        self.reads = self.failed = 0

    def start(self):
        self.out, self.err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
        self.child = subprocess.Popen([self.cli, "regions", "--json", str(self.pid)], stdout=self.out,
                                      stderr=self.err, stdin=subprocess.DEVNULL)
        self.began = time.monotonic()

    def running(self):
        return self.child is not None

    def poll(self, listed, wait=False):
        """The finished read as a dict, each region handed to listed as it is
        parsed (region(): the lists hold None), or None (still running; or
        failed: then self.failed counts it)."""
        if not self.child:
            return None
        try:
            rc = self.child.wait(READ_TIMEOUT - (time.monotonic() - self.began)) if wait else self.child.poll()
        except subprocess.TimeoutExpired:
            rc = None
        if rc is None and time.monotonic() - self.began < READ_TIMEOUT:
            return None
        if rc is None:
            self.child.kill()
            self.child.wait()
        self.child = None
        with self.out:
            self.out.seek(0)
            try:
                doc = json.load(self.out, object_hook=lambda d: listed(region(d)) if "published_gen" in d else d) \
                    if rc == 0 else None
            except ValueError:
                doc = None
        with self.err:
            self.err.seek(0)
            why = self.err.read(512).decode("utf-8", "replace").split("\n")[0]
        if not isinstance(doc, dict) or not isinstance(doc.get("live"), list):
            self.failed += 1
            if self.failed == 1:  # why a table cannot be read (too big for the reader: the ring alone names)
                print(f"jitframes_sample: a read of the table failed ({pub_table.printable(why) or f'exit status {rc}'}); "
                      "further failures are counted", file=sys.stderr)
            return None
        self.reads += 1
        return doc


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


def sample_json(t, pc, generation, status, hit):
    return json.dumps({"t": t, "pc": pc, "generation": generation,
                       "status": "unreadable" if status else "found" if hit else "not_found",
                       "name": hit[2] if hit else "", "start": hit[0] if hit else 0, "size": hit[1] if hit else 0})


def main():
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("pid", type=int)
    ap.add_argument("--samples", type=int, default=1000, help="stop after this many samples of PID")
    ap.add_argument("--freq", type=int, default=997)
    ap.add_argument("--max-seconds", type=float, default=60.0, help="stop then even with fewer samples")
    ap.add_argument("-o", "--output", help="write the samples there (default: stdout)")
    ap.add_argument("--jitframes", default=shutil.which("jitframes"),
                    help="the jitframes CLI, whose `regions --json` reads the table (default: the one on PATH)")
    args = ap.parse_args()
    if not args.jitframes:
        print("jitframes_sample: no jitframes CLI on PATH (--jitframes names it)", file=sys.stderr)
        return 1
    try:
        target = Target(args.pid)
    except OSError as e:
        print(f"jitframes_sample: cannot read process {args.pid}: {e}", file=sys.stderr)
        return 1
    if not target.base:
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

    def tell_base(base):
        bpf["where"][ctypes.c_int(1)] = ctypes.c_uint64(base)

    tell_base(target.base)
    bpf["where"][ctypes.c_int(0)] = ctypes.c_uint64(target.symbol)
    target.on_move = tell_base
    print(f"jitframes_sample: sampling process {args.pid}, table at {target.base:#x}, "
          + (f"jf_region_table at {target.symbol:#x}" if target.symbol else "no jf_region_table symbol"),
          file=sys.stderr)

    out = open(args.output, "w") if args.output else sys.stdout
    known, ring, reader = Known(), RingWatcher(target), Reader(args.jitframes, args.pid)
    mem = open(f"/proc/{args.pid}/mem", "rb", buffering=0)
    arrived = collections.deque()  # samples from the perf buffer, appended by its own thread
    pending = []  # (t, pc, generation) of samples not named yet
    count = {"got": 0, "lost": 0, "named": 0, "live": 0}
    began_at = [0, 0]  # generation when the running read began, and when the one before began
    polled = [0, 0]  # see poll_samples
    known.pending = lambda: pending

    def on_event(cpu, data, size):
        if count["got"] >= args.samples:  # taken while a read kept the main thread busy: not asked for
            return
        s = bpf["samples"].event(data)
        count["got"] += 1
        arrived.append((s.t, s.pc, s.generation, s.status))

    def on_lost(n):
        count["lost"] += n

    def poll_samples(stop):
        """The perf buffer drained every 50 ms whatever the main thread
        does; polled[0]: every sample taken before the table was at that
        generation has arrived (it was read before the poll before last)."""
        with open(f"/proc/{args.pid}/mem", "rb", buffering=0) as own:
            while not stop.is_set():
                before = generation_now(own)
                bpf.perf_buffer_poll(timeout=int(RING_PERIOD * 1000))
                polled[0], polled[1] = polled[1], before

    def write(t, pc, generation, status, hit):
        count["named"] += hit is not None
        out.write(sample_json(t, pc, generation, status, hit) + "\n")

    def take_samples():
        while arrived:
            t, pc, generation, status = arrived.popleft()
            if status:
                write(t, pc, generation, status, None)
            else:
                pending.append((t, pc, generation))

    def generation_now(handle=mem):
        try:
            return target.header(handle)[1][pub_table.H_GEN]
        except (OSError, ValueError, struct.error):
            return 0

    def take_ring():
        found = ring.take()
        for key, (size, name, removed) in found.items():
            known.add(key, size, name, removed)

    def listed(region):
        known.listed(began_at[0], region)

    def take_read(doc):
        """After a finished read (consistent or not: each region it lists is
        whole): name the samples it covers, those taken at or before the
        generation it began at; forget what no pending sample needs."""
        nonlocal pending
        floor = polled[0] - 2  # before take_samples: every sample under it has arrived, and is taken now
        take_samples()  # before the ring's removals: forget (beyond MAX_REMOVED) keeps what pending samples need
        take_ring()
        known.sweep(began_at[0], generation_now())
        count["live"] = max(count["live"], len(doc["live"]))
        left = []
        for t, pc, generation in pending:
            if generation > began_at[0]:
                left.append((t, pc, generation))
            else:
                write(t, pc, generation, 0, known.resolve(pc, generation))
        pending = left
        known.forget(floor)

    def next_read():
        began_at[1], began_at[0] = began_at[0], generation_now()
        reader.start()

    bpf["samples"].open_perf_buffer(on_event, page_cnt=256, lost_cb=on_lost)
    stop_polling = threading.Event()
    poller = threading.Thread(target=poll_samples, args=(stop_polling,), daemon=True)
    poller.start()
    ring.start()
    next_read()
    deadline = time.monotonic() + args.max_seconds
    while count["got"] < args.samples and time.monotonic() < deadline:
        time.sleep(RING_PERIOD)
        floor = polled[0] - 2  # as in take_read: read before the samples are taken
        take_samples()
        known.floor = floor
        take_ring()
        doc = reader.poll(listed)
        if doc:
            take_read(doc)
        if not reader.running():
            if not os.path.exists(f"/proc/{args.pid}"):
                break
            next_read()
    stop_polling.set()
    poller.join()
    bpf.perf_buffer_poll(timeout=0)
    take_samples()
    for again in (True, False):  # the running read, then (if it began too early) one begun after the last sample
        doc = reader.poll(listed, wait=True)
        if doc:
            take_read(doc)
        if again and pending and os.path.exists(f"/proc/{args.pid}"):
            next_read()
    ring.stop.set()
    ring.join()
    ring.read_now()  # the removals since the watcher's last read: the last samples' regions may be among them
    take_ring()
    for t, pc, generation in pending:  # whatever the reads could not prove: named as best known
        write(t, pc, generation, 0, known.resolve(pc, generation))
    out.flush()
    print(f"jitframes_sample: {count['got']} samples ({count['lost']} lost), {count['named']} named; "
          f"{reader.reads} reads of the table ({reader.failed} failed), {ring.reads} of its ring "
          f"({ring.failed} failed, {ring.lost} removals missed); {known.most} regions seen at most (bound: 2 x {count['live']} live at "
          f"most + 2 x {known.max_removed} removed + 1 per pending sample)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
