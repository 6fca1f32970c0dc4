#!/usr/bin/env python3
"""bcc's Python symboliser (BPF.sym with a pid; no BPF program is loaded)
resolves addresses through the perf map jitframes wrote: 10,000 entries whose
names contain spaces and parentheses, plus the framed JIT function. Addresses
at a region's start, middle and last byte must give its exact name; an
anonymous address no entry covers must stay unknown (negative control).
Usage: bcc_sym.py JIT_TARGET"""
import os
import subprocess
import sys
import tempfile
import time

try:
    from bcc import BPF
except ImportError as e:
    print("SKIP: bcc's Python module is not installed (Debian python3-bpfcc):", e)
    sys.exit(77)

N = 10000


def start_target(work, binary):
    ready, stop = os.path.join(work, "ready"), os.path.join(work, "stop")
    proc = subprocess.Popen([binary, ready, stop, str(N), "0"])
    for _ in range(1200):
        if os.path.exists(ready) and os.path.getsize(ready) > 0:
            break
        if proc.poll() is not None:
            sys.exit("FAIL: jit_target exited early")
        time.sleep(0.1)
    else:
        sys.exit("FAIL: jit_target not ready after 120 s")
    with open(ready) as f:
        fields = f.read().split()
    return proc, stop, fields


def check(pid, fields):
    jit, jit_size = int(fields[1], 16), int(fields[2])
    bulk, size, n, unregistered = int(fields[3], 16), int(fields[4]), int(fields[5]), int(fields[6], 16)
    failures = []

    def expect(addr, want):
        got = BPF.sym(addr, pid).decode()
        if got != want:
            failures.append("0x%x: got %r, want %r" % (addr, got, want))

    expect(jit + jit_size // 2, "jitframes bpftrace target")
    for i in range(n):
        want = "bulk fn %d (dir with spaces/f.js:%d)" % (i, i + 1)
        for off in (0, size // 2, size - 1):
            expect(bulk + i * size + off, want)
    expect(unregistered, "[unknown]")
    return n, failures


def main():
    binary = sys.argv[1]
    with tempfile.TemporaryDirectory() as work:
        proc, stop, fields = start_target(work, binary)
        pid = int(fields[0])
        try:
            with open("/tmp/perf-%d.map" % pid) as f:
                lines = f.read().count("\n")
            print("jit_target pid %d: /tmp/perf-%d.map has %d lines" % (pid, pid, lines))
            t0 = time.time()
            n, failures = check(pid, fields)
            print("resolved %d addresses in %.2f s" % (3 * n + 2, time.time() - t0))
        finally:
            open(stop, "w").close()
            proc.wait(timeout=30)
            try:
                os.unlink("/tmp/perf-%d.map" % pid)
            except OSError:
                pass
    for msg in failures[:20]:
        print("FAIL:", msg)
    if failures:
        print("%d wrong names" % len(failures))
        return 1
    print("PASSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
