#!/usr/bin/env python3
"""jitframes record PID: profile a running process on demand.

    jitframes record PID [--via auto|memory|channel] [--duration S]
                         [--call-graph dwarf|fp] [-o DIR] [--keep] [--children]

Two ways to learn the process's generated code, the summary says which:

memory (nothing switched on in the process): every process using jitframes
publishes its live regions in its memory (docs/formats.md, "The published
region table"). While perf records, `jitframes perfmap PID --follow` reads
that table every 25 ms until the recording ends, keeping each new region
with its code bytes read at once and the regions that died between two
reads; then it writes a jitdump into DIR/jit (named for the pid perf saw),
which keeps only the regions some sample may fall in (jfrecord_inject.py),
a record of the process mapping it is added to perf.data (perf inject looks
for one), and `perf inject --jit` turns it into names, source lines and
unwind tables. Reading needs the right
to ptrace the process (the kernel decides); the process writes nothing.

channel (a process started with JITFRAMES_CONTROL=1, listening): turns on
what the recording needs through the control channel (the perf map; with
--call-graph dwarf, the default, the jitdump too), records, puts the sinks
back as they were, runs `perf inject --jit` on a copy of the jitdump, and
removes what it caused outside DIR (the perf map and jitdump that were not
there before), unless --keep, whether the process still runs or has exited.

--via auto (the default) takes the channel when the process listens on one,
else memory. Either way DIR gets

    perf.data        the recording (perf.jit.data: after perf inject)
    flamegraph.html  a self-contained flame graph page (no network needed)

perf inject's jitted-*.so files are made in DIR/jit, and perf's build-id
cache is kept in DIR while perf runs (perf record runs with --no-buildid),
so nothing else is written.

DIR is made by record itself (mode 0700; an existing DIR is refused; the
default name ends in a random suffix) and everything in it is made through
its descriptor, never replacing a file, never through a symlink. Every
program record starts (perf record, perf inject, perf script, the table
follower, the flame graph maker) runs confined by jfrecord_confine.py: as
root, it runs as a helper uid no account has, with DIR the only writable
place of its mount namespace. The process's jitdump is copied with a cap
(jfrecord_inject.JITDUMP_COPY_MAX, 1 GiB; a sparse one is refused). Names
from the process are printed with control characters escaped (visible()).

The process is untrusted (jfrecord_target.py): its identity and files come
from the kernel, its answers and its table are only hints, read with bounds,
and what cannot be proven to be the recording's doing is left and listed
(exit status 1).

Run by the `jitframes` tool, which passes its own path in $JITFRAMES_CLI.
"""
import argparse
import json
import os
import re
import secrets
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import jfrecord_confine  # noqa: E402
import jfrecord_exit  # noqa: E402
import jfrecord_inject  # noqa: E402
import jfrecord_target  # noqa: E402

# What the tool's own refusals mean, passed on as they are: a usage error,
# a process that cannot be reached; any other failure is FAILED.
PASSED_ON = (jfrecord_exit.USAGE, jfrecord_exit.UNREACHABLE)

# Characters that must not reach a terminal as they are: controls (C0, DEL,
# C1 such as 0x9B, a one-byte CSI), format characters (U+202E and the other
# bidirectional overrides), surrogates, private use, unassigned, line and
# paragraph separators.
HIDDEN = ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp")


def visible(text):
    """text with every character a terminal could act on written as an
    escape (\\x1b, \\u202e): names come from the recorded process."""
    out = []
    for ch in text:
        if ch == "\n" or unicodedata.category(ch) not in HIDDEN:
            out.append(ch)
        elif ord(ch) < 0x100:
            out.append("\\x%02x" % ord(ch))
        elif ord(ch) < 0x10000:
            out.append("\\u%04x" % ord(ch))
        else:
            out.append("\\U%08x" % ord(ch))
    return "".join(out)


def say(text, file=None):
    print(visible(text), file=file or sys.stdout)


def fail(message, status=jfrecord_exit.FAILED):
    say("jitframes record: " + message, sys.stderr)
    sys.exit(status)


def cli(*args, check=True):
    """Run the jitframes tool; its exit status UNREACHABLE means no channel."""
    tool = os.environ.get("JITFRAMES_CLI") or "jitframes"
    p = subprocess.run([tool] + list(args), capture_output=True, text=True)
    if check and p.returncode != 0:
        message = (p.stderr or p.stdout).strip()
        fail(message or "jitframes %s: exit status %d" % (" ".join(args), p.returncode),
             p.returncode if p.returncode in PASSED_ON else jfrecord_exit.FAILED)
    return p


def status(pid, check=True):
    """The process's status (--json), or None when check is off and it fails."""
    p = cli("status", str(pid), "--json", check=check)
    return json.loads(p.stdout) if p.returncode == jfrecord_exit.OK else None


def enabled_sinks(st):
    return {name for name, s in st["sinks"].items() if s.get("enabled")}


def parse_args():
    ap = argparse.ArgumentParser(prog="jitframes record",
                                 description="Profile a running process using jitframes: from "
                                             "its memory, or through its control channel.")
    ap.add_argument("pid", type=int, metavar="PID", help="the process, as this side sees it")
    ap.add_argument("--via", choices=("auto", "memory", "channel"), default="auto",
                    help="memory: read the regions the process publishes in its memory (needs the "
                         "right to ptrace it; nothing is switched on in it); channel: turn its sinks "
                         "on through its control channel (JITFRAMES_CONTROL=1); auto (default): "
                         "the channel when the process listens on one, else memory")
    ap.add_argument("--duration", type=float, default=10.0, metavar="S",
                    help="seconds to record (default 10; Ctrl-C ends early)")
    ap.add_argument("--call-graph", choices=("fp", "dwarf"), default="dwarf",
                    help="how perf walks the stack: DWARF (default; through the channel it also "
                         "turns the jitdump on, for unwinding through generated code and for "
                         "source lines, which memory always gives; works in "
                         "code built without frame pointers, e.g. most CPython builds) or frame "
                         "pointers (smaller files; through the channel the perf map alone)")
    ap.add_argument("-o", "--output", default=None, metavar="DIR",
                    help="where perf.data and flamegraph.html go: a new directory, made with "
                         "mode 0700 (an existing one is refused; default: "
                         "jitframes-record-PID-TIME-RANDOM in the current directory). The "
                         "process's jitdump is copied into it, %d MiB at most (a sparse one is "
                         "not copied)" % (jfrecord_inject.JITDUMP_COPY_MAX >> 20))
    ap.add_argument("--frequency", type=int, default=999, metavar="HZ",
                    help="samples per second (default 999)")
    ap.add_argument("--children", action="store_true",
                    help="also count the samples of the processes PID forks during the recording "
                         "(perf follows them; by default the summary and the flame graph are "
                         "PID's alone and say how many samples of children were left out)")
    ap.add_argument("--keep", action="store_true",
                    help="keep the perf map, jitdump and jitted-*.so files the recording caused "
                         "(through memory: DIR/jit/jit-PID.dump, the regions samples may fall in)")
    ap.add_argument("--flamegraph-libs", default=os.environ.get("JITFRAMES_FLAMEGRAPH_LIBS"),
                    metavar="DIR", help="node_modules holding d3 and d3-flame-graph")
    a = ap.parse_args()
    if a.duration <= 0:
        ap.error("--duration must be positive")
    return a


def flamegraph_tools(libs):
    """flamegraph.py and the d3 libraries, from the build tree or an install."""
    scripts = [os.path.join(HERE, "flamegraph.py"),  # a build tree, the wheel, libexec/jitframes
               os.path.join(HERE, "flamegraph", "flamegraph.py")]  # the sources: tools/record
    dirs = [libs] if libs else [os.path.join(HERE, "..", "flamegraph", "node_modules"),
                                os.path.join(HERE, "..", "..", "share", "jitframes", "flamegraph",
                                             "node_modules")]
    script = next((s for s in scripts if os.path.isfile(s)), None)
    lib = next((d for d in dirs if d and os.path.isdir(os.path.join(d, "d3-flame-graph"))), None)
    return script, lib


class Recording:
    """perf record -p PID (confined, into DIR/perf.data), with a progress
    line; Ctrl-C stops it cleanly. The recording ends when its duration has
    passed or at Ctrl-C, while perf still writes its file; run() gives perf's
    exit status and the recording's seconds, and `ended` when it ended."""

    def __init__(self, args, od, with_jitdump, perf):
        # --no-buildid: no build-id pass over perf.data when perf record
        # ends (seconds for a large recording), and none in its header, so
        # perf inject then copies no jitted-*.so into a build-id cache (one
        # per region: 129 MB, 37,217 entries for 7,385 regions). The DSOs
        # are read where they are, at once, by perf inject and perf script.
        cmd = perf + ["record", "-q", "--no-buildid", "-p", str(args.pid), "-F", str(args.frequency),
               "--call-graph", args.call_graph, "-o", "perf.data"]
        if with_jitdump:
            cmd += ["-k", "1"]  # CLOCK_MONOTONIC, as the jitdump's timestamps
        self.cmd = od.helper(cmd + ["--", "sleep", "%g" % args.duration], RECORD_CAPS)
        self.args = args
        self.od = od
        self.interrupted = False
        self.ended = None

    def _on_sigint(self, signum, frame):
        self.interrupted = True
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        self._end(time.monotonic())

    def _end(self, now):
        if self.ended is None:
            self.ended = now

    def run(self):
        self.proc = subprocess.Popen(self.cmd, stdin=subprocess.DEVNULL, start_new_session=True,
                                     pass_fds=(self.od.fd,))
        previous = signal.signal(signal.SIGINT, self._on_sigint)
        start = time.monotonic()
        # One line rewritten in place on a terminal; elsewhere a line every 2 s.
        tty, period, ticks = sys.stderr.isatty(), 0.5, 0
        try:
            while self.proc.poll() is None:
                now = time.monotonic()
                if self.interrupted or now - start >= self.args.duration:
                    self._end(now)
                if tty or ticks % 4 == 0:
                    self._progress(now - start, "\r" if tty else "\n")
                ticks += 1
                left = start + self.args.duration - now
                time.sleep(min(period, left) if left > 0.01 else period if self.ended else 0.01)
        finally:
            signal.signal(signal.SIGINT, previous)
            self._end(time.monotonic())  # perf failed or ended early: nothing to follow
        if tty:
            sys.stderr.write("\n")
        return self.proc.returncode, self.ended - start

    def _progress(self, elapsed, end):
        size = self.od.size("perf.data")
        line = "recording %d: %.1f of %g s, %.1f MB%s" % (
            self.args.pid, min(elapsed, self.args.duration), self.args.duration, size / 1e6,
            " (stopping)" if self.ended is not None else "")
        sys.stderr.write(("\r" + line) if end == "\r" else (line + "\n"))
        sys.stderr.flush()


def perf_script(od, data, fields, perf):
    """perf script's output (confined)."""
    p = subprocess.run(od.helper(perf + ["script", "-i", data, "-F", fields, "--no-inline"], READ_CAPS),
                       pass_fds=(od.fd,), capture_output=True, text=True, errors="replace")
    return p.stdout


def write_flamegraph(args, script_out, od, title):
    """DIR/flamegraph.html, or None, said on stderr, with no page left: an
    empty or partial page must not pass for one (report then fails)."""
    script, libs = flamegraph_tools(args.flamegraph_libs)
    if not script or not libs:
        say("jitframes record: no flame graph page: %s not found (npm ci in tools/record/flamegraph, "
            "or --flamegraph-libs DIR)" % ("flamegraph.py" if not script else "d3-flame-graph"),
            sys.stderr)
        return None
    with jfrecord_inject.open_new(od.fd, "flamegraph.html", "w") as f:
        cmd = [sys.executable, "-I", script, "--libs", libs, "--title", title]
        p = subprocess.run(od.helper(cmd, READ_CAPS), pass_fds=(od.fd,), input=script_out, stdout=f,
                           stderr=subprocess.PIPE, text=True)
    if p.returncode == 0 and od.size("flamegraph.html") > 0:
        return od.path("flamegraph.html")
    os.unlink("flamegraph.html", dir_fd=od.fd)
    why = (p.stderr.strip().splitlines() or ["exit status %d" % p.returncode])[-1]
    say("jitframes record: no flame graph page: %s" % why, sys.stderr)
    return None


# A frame in generated code, by where perf found its name: the perf map, a
# jitted-*.so of perf inject, or its anonymous JIT mapping.
JIT_DSO = re.compile(r"\((?:/tmp/perf-\d+\.map|.*/jitted-\d+-\d+\.so|\[JIT\][^)]*|//anon)\)$")
FRAME = re.compile(r"^\s*[0-9a-f]+\s+(.*?)(\s+\([^()]*\))?$")


def summarize(script_out, n=8):
    """Samples; the most sampled leaf functions; the generated code (JIT
    functions, interpreted functions' trampolines) by inclusive samples."""
    leaf, jit, total = {}, {}, 0
    for block in script_out.split("\n\n"):
        frames = []
        for line in block.strip().splitlines():
            m = FRAME.match(line)
            if m:
                name = re.sub(r"\+0x[0-9a-f]+$", "", m.group(1)) or "[unknown]"
                frames.append((name, bool(m.group(2) and JIT_DSO.search(m.group(2)))))
        if not frames:
            continue
        total += 1
        leaf[frames[0][0]] = leaf.get(frames[0][0], 0) + 1
        for name in {name for name, in_jit in frames if in_jit}:
            jit[name] = jit.get(name, 0) + 1
    top = lambda d: sorted(d.items(), key=lambda kv: -kv[1])[:n]
    return total, top(leaf), top(jit)


def unwritable(path):
    """Why this existing directory cannot be written, or None."""
    if os.access(path, os.W_OK | os.X_OK):
        return None
    return "is on a read-only file system" if os.statvfs(path).f_flag & os.ST_RDONLY else "is not writable"


EXISTS = "exists: record makes its output directory itself (name a new one)"


def output_dir_problem(path):
    """Why DIR cannot be the output directory, or None; nothing is created."""
    if os.path.lexists(path):
        return EXISTS if os.path.isdir(path) else "exists and is not a directory"
    parent = os.path.dirname(os.path.abspath(path))
    while not os.path.lexists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        return "%s is not a directory" % parent
    why = unwritable(parent)
    return "cannot create it: %s %s" % (parent, why) if why else None


# The capabilities each confined helper keeps (jfrecord_confine.py): reading
# what perf needs to name code (DSOs anywhere, kernel symbols); perf record
# also profiles another user's process; the follower reads its memory.
READ_CAPS = ["dac_read_search", "syslog"]
RECORD_CAPS = READ_CAPS + ["perfmon", "sys_ptrace", "ipc_lock"]
FOLLOW_CAPS = ["dac_read_search", "sys_ptrace"]


class OutputDir:
    """DIR, made here (mode 0700, never through a symlink, never an existing
    one), held by a descriptor: every file in it is made, read and removed
    through that descriptor. As root, it belongs to the helper uid while
    helpers run (they write in it), and back to root by restore()."""

    def __init__(self, shown, fd, target_uid):
        self.shown, self.fd = shown, fd
        self.abs = os.path.abspath(shown)
        self.root = os.geteuid() == 0
        self.uid = jfrecord_confine.helper_uid(target_uid) if self.root else os.geteuid()
        self._give(self.fd)

    def _give(self, fd, name=None):
        if self.root and name:
            os.chown(name, self.uid, self.uid, dir_fd=fd, follow_symlinks=False)
        elif self.root:
            os.fchown(fd, self.uid, self.uid)

    def path(self, name):
        return os.path.join(self.shown, name)

    def mkdir(self, name):
        """A new directory DIR/name for the helpers; its descriptor."""
        os.mkdir(name, 0o700, dir_fd=self.fd)
        self._give(self.fd, name)
        return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                       dir_fd=self.fd)

    def size(self, name):
        try:
            return os.stat(name, dir_fd=self.fd, follow_symlinks=False).st_size
        except OSError:
            return 0

    def helper(self, argv, caps):
        """argv confined to DIR (its working directory), as the helper uid."""
        return jfrecord_confine.command(self.fd, self.uid, caps, argv)

    def restore(self):
        """Everything in DIR owned by root again (nothing followed)."""
        if not self.root:
            return
        for _, dirs, files, dfd in os.fwalk(".", dir_fd=self.fd, follow_symlinks=False):
            for name in dirs + files:
                os.chown(name, 0, 0, dir_fd=dfd, follow_symlinks=False)
        os.fchown(self.fd, 0, 0)


def _mkdir_new(parent_fd, name):
    os.mkdir(name, 0o700, dir_fd=parent_fd)
    fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent_fd)
    st = os.fstat(fd)
    if st.st_uid != os.geteuid() or not stat.S_ISDIR(st.st_mode):
        os.close(fd)
        raise OSError(17, "it was replaced as it was made")
    os.fchmod(fd, 0o700)
    return fd


def make_output_dir(path, pid, target_uid):
    """DIR made now: -o DIR (refused if it exists), else
    jitframes-record-PID-TIME-RANDOM in the working directory (a fresh
    random suffix: nobody can have made it before)."""
    default = path is None
    for _ in range(8 if default else 1):
        if default:
            path = "jitframes-record-%d-%s-%s" % (pid, time.strftime("%Y%m%d-%H%M%S"),
                                                  secrets.token_hex(4))
        parent, name = os.path.split(os.path.abspath(path))
        try:
            pfd = os.open(parent, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
            try:
                return OutputDir(path, _mkdir_new(pfd, name), target_uid)
            finally:
                os.close(pfd)
        except FileExistsError:
            if not default:
                fail("-o %s: %s" % (path, EXISTS), jfrecord_exit.USAGE)
        except OSError as e:
            fail("-o %s: %s" % (path, e.strerror), jfrecord_exit.USAGE)
    fail("cannot make a new output directory in %s" % os.getcwd(), jfrecord_exit.USAGE)


def open_target(pid):
    try:
        return jfrecord_target.Target(pid)
    except jfrecord_target.TargetError as e:
        fail(str(e), jfrecord_exit.UNREACHABLE)


def lies(target, st):
    """What the process's answer says about itself that the kernel contradicts."""
    said = []
    if st.get("pid_inside") != target.nspid:
        said.append("pid %s (the kernel: %d)" % (st.get("pid_inside"), target.nspid))
    if st.get("uid") != target.uid:
        said.append("uid %s (the kernel: %d)" % (st.get("uid"), target.uid))
    return said


def files_to_watch(target, st, want):
    """The files the recording may cause (opened before it), and the
    jitdump's directory descriptor (None without the jitdump)."""
    try:
        files = [jfrecord_target.perf_map(target, target.open_dir("/tmp"))]
    except jfrecord_target.TargetError as e:
        fail("process %d's /tmp cannot be reached safely: %s" % (target.pid, e))
    dump_fd = None
    if "jitdump" in want:
        dump_dir = st.get("dump_dir") or ""
        try:
            dump_fd = target.open_dir(dump_dir)
        except jfrecord_target.TargetError as e:
            fail("process %d's jitdump directory cannot be reached safely from its root: %s "
                 "(--call-graph fp records without the jitdump)" % (target.pid, e))
        files.append(jfrecord_target.jitdump(target, dump_fd, dump_dir))
    return files, dump_fd


def perf_inject(od, data, stage_fd, perf):
    """perf inject --jit (confined) of DIR/data into DIR/perf.jit.data, then
    data (in DIR/jit) removed: its name, or None with why."""
    p = jfrecord_inject.run_perf_inject(perf, "jit/" + data, "perf.jit.data", od.fd, od.uid)
    os.unlink(data, dir_fd=stage_fd)
    if p.returncode != 0:
        return None, "perf inject --jit: " + (p.stderr.strip() or "exit status %d" % p.returncode)
    return "perf.jit.data", None


def inject(target, dump_fd, od, perf):
    """perf inject --jit on a capped copy of the jitdump the process mapped,
    every other record perf would take for a jitdump dropped: the output's
    name in DIR, or None with why."""
    name = "jit-%d.dump" % target.nspid
    try:
        inodes = jfrecord_inject.jit_mmap_inodes(od.fd, "perf.data", target.pid, name)
        if not inodes:
            return None, "the process mapped no %s during the recording" % name
        stage_fd = od.mkdir("jit")
        dump = jfrecord_inject.stage_jitdump(dump_fd, name, inodes, stage_fd, target.pid)
        jfrecord_inject.repoint_jit_mmaps((od.fd, "perf.data"), (stage_fd, "perf.data"), target.pid,
                                          name, os.path.join(od.abs, "jit", dump))
    except (jfrecord_inject.InjectError, OSError) as e:
        return None, str(e)
    try:
        return perf_inject(od, "perf.data", stage_fd, perf)
    finally:
        os.unlink(dump, dir_fd=stage_fd)
        os.close(stage_fd)


def read_table(pid):
    """(number of live regions, None) when process pid's published table
    can be read, else (0, why not). Only the listing's first line is read: a
    hostile table may list a million regions."""
    tool = os.environ.get("JITFRAMES_CLI") or "jitframes"
    p = subprocess.Popen([tool, "regions", str(pid)], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, errors="replace")
    # The reader's own deadline is 10 s (tools/readers/table_reader.h); 4x that here.
    timer = threading.Timer(40, p.kill)
    timer.start()
    first = p.stdout.readline()
    if first:
        p.kill()
    err = p.communicate()[1]
    timer.cancel()
    m = re.match(r"(\d+) live regions", first)
    if m:
        return int(m.group(1)), None
    return 0, err.strip() or "jitframes regions: exit status %d" % p.returncode


def choose_path(args):
    """'memory' or 'channel'. --via auto: the channel when the process
    listens on it (a peer that answers, whose pid the kernel confirms by
    SO_PEERCRED, and whose answer about itself the kernel does not
    contradict), else memory when the table can be read. The channel first:
    a client may publish regions that no longer name what runs (CPython's
    trampolines stay in the table after a recording through the channel, but
    in standby its frame hook is out and nothing runs through them), while
    the channel turns on what the recording needs."""
    if args.via == "channel":
        return "channel"
    answer = status(args.pid, check=False) if args.via == "auto" else None
    if answer is not None and not lies(open_target(args.pid), answer):
        return "channel"
    why = read_table(args.pid)[1]
    if why is None:
        return "memory"
    if args.via == "memory":
        fail("--via memory: " + why, jfrecord_exit.UNREACHABLE)
    if answer is not None:
        return "channel"  # the only way left; main() says what the kernel contradicts
    listens = cli("status", str(args.pid), check=False)
    said = re.sub(r"^jitframes[^:]*: ", "", (listens.stderr or listens.stdout).strip())
    why = re.sub(r"^jitframes[^:]*: (process \d+: )?", "", why)
    fail("%s; its published table cannot be read either: %s" % (said, why), jfrecord_exit.UNREACHABLE)


def main():
    args = parse_args()
    if not shutil.which("perf"):
        fail("perf is not installed (Debian: apt-get install linux-perf)")
    if args.output is not None:
        problem = output_dir_problem(args.output)
        if problem:
            fail("-o %s: %s" % (args.output, problem), jfrecord_exit.USAGE)
    else:
        why = unwritable(".")
        if why:
            fail("the working directory %s (the output directory's default place; -o DIR)" % why,
                 jfrecord_exit.USAGE)
    target = open_target(args.pid)
    path = choose_path(args)
    if path == "memory":
        return in_output_dir(args, target, lambda od, perf: record_from_memory(args, target, od, perf))
    before = status(args.pid)
    told = lies(target, before)
    if told:
        say("jitframes record: process %d says it is %s: its answers are not trusted" % (
            args.pid, ", ".join(told)), sys.stderr)
    had = enabled_sinks(before)
    want = {"perfmap"} | ({"jitdump"} if args.call_graph == "dwarf" else set())
    turned_on = sorted(want - had)
    files, dump_fd = files_to_watch(target, before, want)
    return in_output_dir(args, target, lambda od, perf: record(args, target, od, perf, turned_on, want,
                                                               files, dump_fd, told))


def in_output_dir(args, target, run):
    """run(output directory, perf command) in a new output directory, with
    perf's build-id cache (it copies every DSO and jitted-*.so) in it,
    removed after: ~/.debug is left as it was. (perf sets PERF_BUILDID_DIR
    for its children but does not read it: the option is the way.)"""
    od = make_output_dir(args.output, args.pid, target.uid)
    try:
        cache = ".perf-buildid-" + secrets.token_hex(4)
        os.close(od.mkdir(cache))
        try:
            return run(od, ["perf", "--buildid-dir", cache])
        finally:
            shutil.rmtree(cache, ignore_errors=True, dir_fd=od.fd)
    finally:
        od.restore()


class Follower:
    """`jitframes perfmap PID --follow` (confined) writing DIR/jit's jitdump
    under a temporary name; finish() ends it (its stdin closes) and gives the
    dump's name in DIR/jit, or None, and its summary line."""

    def __init__(self, pid, od, stage_fd):
        self.stage_fd = stage_fd
        self.part = ".jit-%d.dump.part" % pid
        self.final = "jit-%d.dump" % pid
        tool = os.environ.get("JITFRAMES_CLI") or "jitframes"
        # Its own session: a Ctrl-C meant for the recording does not end it.
        cmd = [tool, "perfmap", str(pid), "--follow", "--jitdump", "jit/" + self.part]
        self.proc = subprocess.Popen(od.helper(cmd, FOLLOW_CAPS), pass_fds=(od.fd,),
                                     stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True, start_new_session=True)

    def stop(self):
        """Stop reading (its stdin closes): it writes the jitdump meanwhile."""
        if self.proc.stdin:
            self.proc.stdin.close()
            self.proc.stdin = None  # communicate() must not flush it

    def finish(self):
        try:
            self.stop()
            err = self.proc.communicate(timeout=120)[1]  # stdin ended: it writes
        except subprocess.TimeoutExpired:
            self.proc.kill()
            err = self.proc.communicate()[1] + "\n(killed: still running 120 s after the recording)"
        lines = [l for l in err.strip().splitlines() if l]
        try:
            st = os.stat(self.part, dir_fd=self.stage_fd, follow_symlinks=False)
        except OSError:
            st = None
        if self.proc.returncode != 0 or st is None or not stat.S_ISREG(st.st_mode):
            return None, "; ".join(lines) or "exit status %d" % self.proc.returncode
        # Born complete, in DIR: a new name (link fails if it exists), the old one removed.
        os.link(self.part, self.final, src_dir_fd=self.stage_fd, dst_dir_fd=self.stage_fd,
                follow_symlinks=False)
        os.unlink(self.part, dir_fd=self.stage_fd)
        return self.final, (lines[-1] if lines else "")


def inject_marked(pid, dump, od, stage_fd, perf):
    """perf inject --jit with the dump written from memory (DIR/jit/dump),
    the process's own jitdump records dropped: its output, or None with why."""
    try:
        st = os.stat(dump, dir_fd=stage_fd, follow_symlinks=False)
        jfrecord_inject.add_jit_marker((od.fd, "perf.data"), (stage_fd, "perf.data"), pid,
                                       os.path.join(od.abs, "jit", dump), st)
    except (jfrecord_inject.InjectError, OSError) as e:
        return None, str(e)
    return perf_inject(od, "perf.data", stage_fd, perf)


def keep_sampled_only(dump, od, stage_fd):
    """DIR/jit/dump with only the regions some sample of DIR/perf.data may
    fall in (jfrecord_inject.keep_sampled: perf inject makes a file per region):
    what it says, or None when every region stays."""
    part = ".sampled-" + dump
    with jfrecord_inject.open_read(stage_fd, dump) as src, jfrecord_inject.open_new(stage_fd, part) as dst, \
            jfrecord_inject.open_read(od.fd, "perf.data") as data:
        kept, total = jfrecord_inject.keep_sampled(src, dst, data)
    os.unlink(dump, dir_fd=stage_fd)
    os.link(part, dump, src_dir_fd=stage_fd, dst_dir_fd=stage_fd, follow_symlinks=False)
    os.unlink(part, dir_fd=stage_fd)
    return None if kept is None else "%d of its %d regions given to perf inject: those samples may " \
        "fall in" % (kept, total)


def record_from_memory(args, target, od, perf):
    stage_fd = od.mkdir("jit")
    follower = Follower(args.pid, od, stage_fd)
    say("jitframes record: %d via its memory (its published table; nothing switched on in it)" %
        args.pid, sys.stderr)
    # The follower stops once perf has exited, not when the duration has
    # passed here: perf's workload starts later than this timer (perf's
    # start-up), so perf samples on after it, and code published meanwhile
    # was named after what lived there before (the last ~10 ms of samples of
    # a churning process). It then reads once more; perf's wrap-up is short
    # (--no-buildid), and what it kept unsampled is dropped before inject.
    recording = Recording(args, od, True, perf)
    try:
        rc, seconds = recording.run()
    finally:
        dump, followed = follower.finish()
    after = Timing(recording.ended)
    after.mark("perf record and the follower")
    if not od.size("perf.data"):
        fail("perf record failed (exit status %s)" % rc)
    read, problems = "perf.data", []
    if dump is None:
        problems.append("no jitdump from the process's memory: " + followed)
    else:
        try:
            sampled = keep_sampled_only(dump, od, stage_fd)
        except OSError as e:
            fail("the jitdump from the process's memory: %s" % e)
        after.mark("choosing the sampled regions")
        jit, why = inject_marked(args.pid, dump, od, stage_fd, perf)
        after.mark("perf inject --jit")
        if jit:
            read = jit
            if not args.keep:
                os.unlink(dump, dir_fd=stage_fd)
        else:
            problems.append("no perf.jit.data: " + why)
    path = "memory (%s)" % re.sub(r"^jitframes perfmap: ", "", followed) if dump else "memory"
    if dump and sampled:
        path += "; " + sampled
    result = analyse(args, od, perf, read, seconds)
    after.mark("perf script and the flame graph")
    return report(args, result, path, problems, after)


def record(args, target, od, perf, turned_on, want, files, dump_fd, told):
    if turned_on:
        p = cli("enable", str(args.pid), ",".join(turned_on), check=False)
        if p.returncode != 0:  # some may be on: put them back before saying why
            cli("disable", str(args.pid), ",".join(turned_on), check=False)
            fail((p.stderr or p.stdout).strip() or "enable: exit status %d" % p.returncode,
                 p.returncode if p.returncode in PASSED_ON else jfrecord_exit.FAILED)
    during = status(args.pid)
    if not want <= enabled_sinks(during):
        fail("the process did not turn on %s" % ",".join(sorted(want - enabled_sinks(during))))
    say("jitframes record: %d, sinks %s (turned on: %s), %d live regions" % (
        args.pid, ",".join(sorted(enabled_sinks(during))), ",".join(turned_on) or "none",
        during.get("live_regions", 0)), sys.stderr)

    recording = Recording(args, od, "jitdump" in want, perf)
    try:
        rc, seconds = recording.run()
    finally:
        # Put the sinks back as they were, unless the pid is no longer the process.
        if turned_on and not target.exited():
            cli("disable", str(args.pid), ",".join(turned_on), check=False)
    after = Timing(recording.ended)
    after.mark("perf record")
    if not od.size("perf.data"):
        fail("perf record failed (exit status %s)" % rc)

    read, problems = "perf.data", []
    if "jitdump" in want:
        jit, why = inject(target, dump_fd, od, perf)
        after.mark("perf inject --jit")
        if jit:
            read = jit
        else:
            problems.append("no perf.jit.data: " + why)
    # perf script reads the perf map where the process wrote it: before the clean-up.
    result = analyse(args, od, perf, read, seconds)
    after.mark("perf script and the flame graph")
    if not args.keep:  # what this recording caused, outside DIR
        for path, why in jfrecord_target.clean_up(target, files):
            problems.append("left %s: %s" % (path, why))
    if told:
        problems.append("process %d's answers contradict the kernel (%s)" % (args.pid, ", ".join(told)))
    path = "channel (sinks turned on: %s)" % (",".join(turned_on) or "none")
    return report(args, result, path, problems, after)


class Timing:
    """Where the time after the recording went: seconds between marks."""

    def __init__(self, ended):
        self.ended = self.last = ended
        self.parts = []

    def mark(self, what):
        now = time.monotonic()
        self.parts.append((what, now - self.last))
        self.last = now

    def line(self):
        return "%.1f s after the recording (%s)" % (
            self.last - self.ended, ", ".join("%s %.1f s" % part for part in self.parts))


def samples_of(out, args):
    """perf script's samples (blocks: a "PID" line, then the frames) of
    args.pid alone (all with --children), without the PID lines; and how
    many samples of other processes were left out. One perf script pass:
    each takes seconds when thousands of jitted-*.so are mapped."""
    kept, others = [], 0
    for block in out.split("\n\n"):
        head, _, frames = block.strip("\n").partition("\n")
        pid, _, frame = head.strip().partition(" ")
        if not pid:
            continue
        if args.children or pid == str(args.pid):
            kept.append(frame + "\n" + frames if frame.strip() else frames)
        else:
            others += 1
    return "\n\n".join(kept) + ("\n" if kept else ""), 0 if args.children else others


def analyse(args, od, perf, read, seconds):
    """perf script's samples and the flame graph page: what report prints."""
    script_out, children = samples_of(perf_script(od, read, "pid,ip,sym,dso", perf), args)
    title = "process %d, %.1f s (jitframes record)" % (args.pid, seconds)
    names_only = re.sub(r"[ \t]+\([^()\n]*\)$", "", script_out, flags=re.M)  # flamegraph.py reads "ip sym"
    page = write_flamegraph(args, names_only, od, title)
    return script_out, children, page, od.path(read), seconds


def report(args, result, path, problems, after):
    """The summary, the path taken, the time after the recording and the
    problems; exit status 1 with problems."""
    script_out, children, page, read, seconds = result
    print_summary(args, script_out, seconds, read, page)
    say("  via %s" % path)
    say("  %s" % after.line())
    if children:
        say("  %d samples of processes it forked are left out (--children counts them)" % children)
    if not page and summarize(script_out)[0] > 0:
        problems = problems + ["flamegraph.html not written (said above why)"]
    for p in problems:
        say("jitframes record: " + p, sys.stderr)
    return jfrecord_exit.FAILED if problems else jfrecord_exit.OK


def print_summary(args, script_out, seconds, read, page):
    """The summary; names (the process chose them) escaped by say()."""
    total, leaves, jitted = summarize(script_out)
    say("recorded %d samples of process %d%s in %.1f s%s" % (
        total, args.pid, " and the processes it forked" if args.children else "", seconds,
        " (ended early)" if seconds + 0.5 < args.duration else ""))
    say("  most sampled functions (self):")
    for name, count in leaves:
        say("  %5.1f%%  %s" % (100.0 * count / max(total, 1), name))
    if jitted:
        say("  generated code on the stack (inclusive):")
        for name, count in jitted:
            say("  %5.1f%%  %s" % (100.0 * count / max(total, 1), name))
    say("  %s" % read)
    if page:
        say("  %s" % page)


if __name__ == "__main__":
    sys.exit(main())
