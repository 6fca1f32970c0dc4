"""What `jitframes record` knows of the process it records, from the kernel
alone, and the proofs it needs before it removes a file.

The process is untrusted: it may be hostile and answer anything over its
control channel. So its pid, its pid inside its own namespace, its uid and
its root come from the kernel (a pidfd, /proc/PID/status, /proc/PID/root),
never from its answers. Directories are opened once, before the recording,
one component at a time from the process's root without following symlinks,
and kept open: they stay reachable after the process exits, and a symlink
swapped in later cannot redirect us. A file is removed only when the
recording is proven to have caused it: absent before, then a regular file
(not a symlink) with one link, owned by the process's uid, named for the
process's own pid as the kernel maps it, with the content its name says.
"""
import os
import re
import select
import stat

PATH_DIR = os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC


class TargetError(Exception):
    """The process cannot be recorded: the message says why."""


class Target:
    """The process PID as the kernel describes it, held by a pidfd."""

    def __init__(self, pid):
        self.pid = pid
        try:
            self.pidfd = os.pidfd_open(pid)
            self.proc = os.open("/proc/%d" % pid, PATH_DIR)
        except ProcessLookupError:
            raise TargetError("no process %d" % pid)
        except FileNotFoundError:
            raise TargetError("no process %d" % pid)
        status = self._status()
        # Opened after the pidfd: if the process still runs, /proc/PID is it.
        if status.get("State", "").startswith(("Z", "X")) or self.exited():
            raise TargetError("process %d has exited (zombie): there is nothing to record" % pid)
        self.nspid = int(status["NSpid"].split()[-1])  # its pid as it sees itself
        self.uid = int(status["Uid"].split()[3])      # its filesystem uid: owner of what it creates
        try:
            self.root = os.open("root", PATH_DIR, dir_fd=self.proc)
        except OSError as e:
            raise TargetError("cannot reach process %d's files (/proc/%d/root: %s): run as its user "
                              "or as root" % (pid, pid, e.strerror))

    def _status(self):
        fd = os.open("status", os.O_RDONLY | os.O_CLOEXEC, dir_fd=self.proc)
        try:
            text = os.read(fd, 65536).decode("ascii", "replace")
        finally:
            os.close(fd)
        return dict(line.split(":\t", 1) for line in text.splitlines() if ":\t" in line)

    def exited(self):
        """Has the process exited (its pid may then belong to another one)?"""
        p = select.poll()
        p.register(self.pidfd, select.POLLIN)
        return bool(p.poll(0))

    def open_dir(self, path):
        """A directory of the process (path as it sees it), opened from its
        root without following a symlink or "..": an O_PATH descriptor, or
        TargetError saying why not."""
        if not path.startswith("/"):
            raise TargetError("%r is not an absolute path" % path)
        fd = os.dup(self.root)
        try:
            for part in [p for p in path.split("/") if p not in ("", ".")]:
                if part == "..":
                    raise TargetError("%s has a '..' component" % path)
                try:
                    nxt = os.open(part, PATH_DIR | os.O_NOFOLLOW, dir_fd=fd)
                except OSError as e:
                    why = "a symlink or not a directory" if e.errno == 20 else e.strerror
                    raise TargetError("%s: component %r: %s" % (path, part, why))
                os.close(fd)
                fd = nxt
            return fd
        except BaseException:
            os.close(fd)
            raise


def _perf_map_content(fd, nspid):
    """None if the file reads as a perf map (hex start, hex size, name per
    line: the first 64 KiB are checked), else why not."""
    data = os.read(fd, 65536)
    lines = data.split(b"\n")
    if len(data) == 65536:
        lines = lines[:-1]  # the last line may be cut by the read
    bad = next((l for l in lines if l and not re.match(rb"^[0-9a-fA-F]+ [0-9a-fA-F]+ .", l)), None)
    return None if bad is None else "its content is not a perf map"


JITDUMP_MAGIC = 0x4A695444  # "JiTD"


def jitdump_byte_order(header):
    """'<' or '>' for a jitdump header's magic, or None."""
    for order in ("<", ">"):
        if int.from_bytes(header[:4], "little" if order == "<" else "big") == JITDUMP_MAGIC:
            return order
    return None


def _jitdump_content(fd, nspid):
    header = os.read(fd, 40)
    order = jitdump_byte_order(header)
    if len(header) < 40 or order is None:
        return "its content is not a jitdump header"
    pid = int.from_bytes(header[20:24], "little" if order == "<" else "big")
    return None if pid == nspid else "its header names pid %d, not %d" % (pid, nspid)


class OwnFile:
    """A file the recording may cause: its name in a directory of the
    process, and whether it was there before."""

    def __init__(self, shown, dir_fd, name, content_check):
        self.shown, self.dir_fd, self.name, self.check = shown, dir_fd, name, content_check
        self.before = self._lstat()

    def _lstat(self):
        try:
            return os.stat(self.name, dir_fd=self.dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            return None

    def why_not_ours(self, target):
        """None if the recording provably caused this file, else why not
        ("" when there is no such file or it was there before)."""
        st = self._lstat()
        if st is None or self.before is not None:
            return ""  # nothing there, or not the recording's doing: not ours to report
        if not stat.S_ISREG(st.st_mode):
            return "not a regular file"
        if st.st_uid != target.uid:
            return "owned by uid %d, not the process's uid %d" % (st.st_uid, target.uid)
        if st.st_nlink != 1:
            return "it has %d links" % st.st_nlink
        try:
            fd = os.open(self.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                         dir_fd=self.dir_fd)
        except OSError as e:
            return "cannot open it: %s" % e.strerror
        try:
            st2 = os.fstat(fd)
            if (st2.st_dev, st2.st_ino) != (st.st_dev, st.st_ino):
                return "it changed while being checked"
            why = self.check(fd, target.nspid)
        finally:
            os.close(fd)
        self.proven = st
        return why

    def remove(self):
        """Unlink the name if it still is the file proven ours."""
        st = self._lstat()
        if st is None or (st.st_dev, st.st_ino) != (self.proven.st_dev, self.proven.st_ino):
            return "it changed after it was checked"
        try:
            os.unlink(self.name, dir_fd=self.dir_fd)
        except OSError as e:
            return "cannot remove it: %s" % e.strerror
        return None


def perf_map(target, tmp_fd):
    name = "perf-%d.map" % target.nspid
    return OwnFile("/proc/%d/root/tmp/%s" % (target.pid, name), tmp_fd, name, _perf_map_content)


def jitdump(target, dump_fd, dump_dir):
    name = "jit-%d.dump" % target.nspid
    return OwnFile("/proc/%d/root%s/%s" % (target.pid, dump_dir.rstrip("/"), name), dump_fd, name,
                   _jitdump_content)


def clean_up(target, files):
    """Remove the files the recording caused; the list of (file, reason) left."""
    left = []
    for f in files:
        why = f.why_not_ours(target)
        if why is None:
            why = f.remove()
        if why:
            left.append((f.shown, why))
    return left
