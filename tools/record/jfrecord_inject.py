"""`perf inject --jit` for `jitframes record`, writing only into its output
directory.

By itself perf inject opens the jitdump at the path the process mapped it
under (entering the process's mount namespace while it lives) and writes its
jitted-PID-N.so files beside it: as root, into a directory the process
controls, following any symlink planted there, and leaving them behind when
the process is gone. Instead, the jitdump the process mapped (proven by its
inode, read from a directory opened from the process's root) is copied into
the output directory, the recording's mmap records of it are pointed at the
copy, and perf inject runs where it cannot see the process (its own pid
namespace, as root), so it stays in ours: the .so files land beside the copy.
The copy is named for, and its records carry, the pid perf saw (outside any
pid namespace), as perf then expects.

When the jitdump was written from the process's memory instead (`--via
memory`: the process mapped nothing), add_jit_marker gives the recording the
record perf inject looks for: an MMAP2 of jit-PID.dump by the process (perf's
jit_detect matches the file name's pid with the record's), timed before the
first sample.
"""
import bisect
import os
import re
import shutil
import stat
import struct
import subprocess

import jfrecord_confine
from jfrecord_target import jitdump_byte_order

PERF_MAGIC = b"PERFILE2"
HEADER = struct.Struct("<8sQQQQQQQQ32s")  # magic, size, attr_size, attrs, data, event_types, features
RECORD = struct.Struct("<IHH")            # type, misc, size
MMAP, MMAP2 = 1, 10
SAMPLE = 9
MMAP_FIXED = 32   # pid, tid, addr, len, pgoff
MMAP2_FIXED = 64  # pid, tid, addr, len, pgoff, maj, min, ino, ino_generation, prot, flags
JITDUMP_COPY_MAX = 1 << 30  # bytes of the process's jitdump copied, at most (1 GiB)
# A file name perf inject takes for a jitdump (tools/perf/util/jitdump.c,
# jit_detect): after the last '/', "jit-", a digit, what strtol reads as the
# pid (more digits), then exactly ".dump".
PERF_JIT_NAME = re.compile(rb"/jit-[0-9]+\.dump$")

O_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
O_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC


class InjectError(Exception):
    pass


def open_new(dir_fd, name, mode="wb"):
    """A new file `name` in dir_fd's directory (never an existing one, never through a symlink)."""
    return os.fdopen(os.open(name, O_NEW, 0o600, dir_fd=dir_fd), mode)


def open_read(dir_fd, name):
    return os.fdopen(os.open(name, O_READ, dir_fd=dir_fd), "rb")


def _mmap2_file(body):
    """(pid, inode, file name, bytes the padded name takes) of an MMAP2 body."""
    pid = struct.unpack_from("<I", body, 0)[0]
    ino = struct.unpack_from("<Q", body, 40)[0]
    end = body.find(b"\0", MMAP2_FIXED)
    if end < 0:
        return pid, ino, None, 0
    return pid, ino, body[MMAP2_FIXED:end], (end - MMAP2_FIXED + 8) & ~7


def perf_takes_as_jitdump(rtype, body):
    """Would perf inject --jit act on this record (an MMAP or MMAP2 of a
    jit-<digits>.dump, by any pid)? Its file name is read as perf reads it:
    up to the first NUL."""
    fixed = {MMAP: MMAP_FIXED, MMAP2: MMAP2_FIXED}.get(rtype)
    if fixed is None or len(body) <= fixed:
        return False
    name = body[fixed:].split(b"\0", 1)[0]
    return PERF_JIT_NAME.search(name) is not None


def _records(f, offset, size):
    """(header, body) of each record of the data section."""
    f.seek(offset)
    done = 0
    while done + RECORD.size <= size:
        head = f.read(RECORD.size)
        rtype, misc, rsize = RECORD.unpack(head)
        if rsize < RECORD.size or done + rsize > size:
            raise InjectError("perf.data: a record of %d bytes at %d" % (rsize, offset + done))
        yield (rtype, misc, rsize), f.read(rsize - RECORD.size)
        done += rsize


def _header(f):
    fields = HEADER.unpack(f.read(HEADER.size))
    if fields[0] != PERF_MAGIC:
        raise InjectError("perf.data is not in perf's native little-endian file format")
    return fields


def jit_mmap_inodes(dir_fd, data, pid, name):
    """Inodes of the files named `name` that process `pid` mapped, as the kernel recorded them."""
    with open_read(dir_fd, data) as f:
        h = _header(f)
        inodes = set()
        for (rtype, _, _), body in _records(f, h[5], h[6]):
            if rtype == MMAP2:
                rpid, ino, fname, _ = _mmap2_file(body)
                if rpid == pid and fname and os.path.basename(fname) == name.encode():
                    inodes.add(ino)
        return inodes


def _copy_data(src, dst, edit, prepend=b""):
    """Copy perf.data src to dst ((dir_fd, name) each) with each record's
    body passed through edit(rtype, body) (None: the record is dropped) and
    the records `prepend` put first in its data."""
    with open_read(*src) as f, open_new(*dst) as out:
        h = list(_header(f))
        data_offset, data_size = h[5], h[6]
        f.seek(0)
        out.write(f.read(data_offset))
        out.write(prepend)
        written = len(prepend)
        for (rtype, misc, rsize), body in _records(f, data_offset, data_size):
            body = edit(rtype, body)
            if body is None:
                continue
            rsize = RECORD.size + len(body)
            out.write(RECORD.pack(rtype, misc, rsize) + body)
            written += rsize
        delta = written - data_size
        # The feature sections follow the data: their table's offsets move by delta.
        features = bin(int.from_bytes(h[9], "little")).count("1")
        f.seek(data_offset + data_size)
        for _ in range(features):
            offset, size = struct.unpack("<QQ", f.read(16))
            out.write(struct.pack("<QQ", offset + delta if offset >= data_offset + data_size else offset,
                                  size))
        shutil.copyfileobj(f, out)
        h[6] = written
        out.seek(0)
        out.write(HEADER.pack(*h))


def _padded_name(path):
    name = path.encode() + b"\0"
    return name + b"\0" * (-len(name) % 8)


def repoint_jit_mmaps(src, dst, pid, name, new_path):
    """Copy perf.data src to dst, its MMAP2 records of `name` by `pid` now
    naming new_path, every other record perf would take for a jitdump dropped."""
    new = _padded_name(new_path)

    def edit(rtype, body):
        if not perf_takes_as_jitdump(rtype, body):
            return body
        if rtype == MMAP2:
            rpid, _, fname, taken = _mmap2_file(body)
            if rpid == pid and os.path.basename(fname) == name.encode():
                return body[:MMAP2_FIXED] + new + body[MMAP2_FIXED + taken:]
        return None
    _copy_data(src, dst, edit)


def drop_jit_mmaps(rtype, body):
    """An edit for _copy_data: every record perf would take for a jitdump dropped."""
    return None if perf_takes_as_jitdump(rtype, body) else body


# perf_event_attr.sample_type bits, and the fields a sample_id trailer holds
# (in this order) when attr.sample_id_all is set.
S_IP, S_TID, S_TIME, S_ID, S_CPU, S_STREAM_ID, S_IDENTIFIER = 1, 2, 4, 64, 128, 512, 1 << 16
SAMPLE_ID_ALL = 1 << 18


def _first_attr(f, h):
    """(sample_type, sample_id_all, its first id or 0) of the file's first event."""
    attr_size, attrs_offset, attrs_size = h[2], h[3], h[4]
    if attr_size < 64 + 16 or attrs_size < attr_size:
        raise InjectError("perf.data: no event attributes")
    f.seek(attrs_offset)
    entry = f.read(attr_size)
    sample_type = struct.unpack_from("<Q", entry, 24)[0]
    flags = struct.unpack_from("<Q", entry, 40)[0]
    ids_offset, ids_size = struct.unpack_from("<QQ", entry, attr_size - 16)
    first_id = 0
    if ids_size >= 8:
        f.seek(ids_offset)
        first_id = struct.unpack("<Q", f.read(8))[0]
    return sample_type, bool(flags & SAMPLE_ID_ALL), first_id


def _first_sample_time(f, h, sample_type):
    """The earliest sample's time (SAMPLE: identifier, ip, pid/tid, time...), or None."""
    if not sample_type & S_TIME:
        return None
    at = (8 if sample_type & S_IDENTIFIER else 0) + (8 if sample_type & S_IP else 0) + \
        (8 if sample_type & S_TID else 0)
    first = None
    for (rtype, _, _), body in _records(f, h[5], h[6]):
        if rtype == SAMPLE and len(body) >= at + 8:
            t = struct.unpack_from("<Q", body, at)[0]
            first = t if first is None or t < first else first
    return first


def _sample_id(sample_type, pid, time, first_id):
    out = b""
    if sample_type & S_TID:
        out += struct.pack("<II", pid, pid)
    if sample_type & S_TIME:
        out += struct.pack("<Q", time)
    if sample_type & S_ID:
        out += struct.pack("<Q", first_id)
    if sample_type & S_STREAM_ID:
        out += struct.pack("<Q", first_id)
    if sample_type & S_CPU:
        out += struct.pack("<II", 0, 0)
    if sample_type & S_IDENTIFIER:
        out += struct.pack("<Q", first_id)
    return out


# Where the marker says the dump is mapped: below mmap_min_addr, so no real
# mapping of the process is ever there (perf inject drops the marker anyway).
MARKER_ADDR, MARKER_LEN = 0x1000, 0x1000
PROT_READ_EXEC, MAP_PRIVATE, MISC_USER = 5, 2, 2


def add_jit_marker(src, dst, pid, dump_path, dump_st):
    """Copy perf.data src to dst ((dir_fd, name) each) with an MMAP2 of
    dump_path (jit-PID.dump, dump_st its stat) by process pid first in its
    data, timed just before the first sample, and every record perf would
    take for a jitdump (the process's own) dropped."""
    with open_read(*src) as f:
        h = _header(f)
        sample_type, id_all, first_id = _first_attr(f, h)
        first = _first_sample_time(f, h, sample_type)
    time = first - 1 if first else 0
    st = dump_st
    body = struct.pack("<IIQQQIIQQII", pid, pid, MARKER_ADDR, MARKER_LEN, 0, os.major(st.st_dev),
                       os.minor(st.st_dev), st.st_ino, 0, PROT_READ_EXEC, MAP_PRIVATE)
    body += _padded_name(dump_path)
    if id_all:
        body += _sample_id(sample_type, pid, time, first_id)
    record = RECORD.pack(MMAP2, MISC_USER, RECORD.size + len(body)) + body
    _copy_data(src, dst, drop_jit_mmaps, prepend=record)


def _rewrite_pids(f, host_pid):
    """CODE_LOAD and CODE_MOVE records (and the header) of the open file f name host_pid."""
    f.flush()
    f.seek(0)
    header = f.read(40)
    order = jitdump_byte_order(header)
    u32 = struct.Struct(order + "I")
    f.seek(20)
    f.write(u32.pack(host_pid))
    offset = u32.unpack_from(header, 8)[0]
    size = os.fstat(f.fileno()).st_size
    while offset + 24 <= size:
        f.seek(offset)
        rid, rsize = struct.unpack(order + "II", f.read(8))
        if rsize < 16:
            break
        if rid in (0, 1) and offset + 24 <= size:  # JIT_CODE_LOAD, JIT_CODE_MOVE: pid, tid
            f.seek(offset + 16)
            f.write(u32.pack(host_pid) * 2)
        offset += rsize


def _copy_capped(src, out, cap):
    """Copy at most cap bytes of src to out; InjectError when there are more."""
    left = cap
    while True:
        chunk = src.read(min(1 << 20, left + 1))
        if not chunk:
            return
        if len(chunk) > left:
            raise InjectError("the jitdump holds more than %d bytes (the most copied)" % cap)
        out.write(chunk)
        left -= len(chunk)


def stage_jitdump(dump_dir_fd, name, inodes, stage_fd, host_pid, cap=JITDUMP_COPY_MAX):
    """Copy the jitdump the process mapped into stage_fd's directory as
    jit-HOST_PID.dump (at most cap bytes; a sparse file is refused): its
    name there, or InjectError saying why not (nothing left behind)."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                     dir_fd=dump_dir_fd)
    except OSError as e:
        raise InjectError("cannot open %s: %s" % (name, e.strerror))
    with os.fdopen(fd, "rb") as src:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1 or st.st_ino not in inodes:
            raise InjectError("%s is not the file the process mapped" % name)
        if st.st_size > cap:
            raise InjectError("%s holds %d bytes, more than the %d copied at most" % (name, st.st_size, cap))
        if st.st_blocks * 512 + (1 << 20) < st.st_size:
            raise InjectError("%s is sparse (%d bytes, %d allocated): not copied" % (
                name, st.st_size, st.st_blocks * 512))
        if jitdump_byte_order(src.read(40)) is None:
            raise InjectError("%s is not a jitdump" % name)
        src.seek(0)
        copy = "jit-%d.dump" % host_pid
        try:
            with os.fdopen(os.open(copy, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW |
                                   os.O_CLOEXEC, 0o600, dir_fd=stage_fd), "r+b") as out:
                _copy_capped(src, out, cap)
                _rewrite_pids(out, host_pid)
        except BaseException:
            os.unlink(copy, dir_fd=stage_fd)
            raise
    return copy


def run_perf_inject(perf, data, out, dir_fd, uid):
    """perf inject --jit, confined to dir_fd's directory (data and out are
    relative to it), as the helper user when root (jfrecord_confine.py)."""
    cmd = perf + ["inject", "--jit", "-i", data, "-o", out]
    return subprocess.run(jfrecord_confine.command(dir_fd, uid, ["dac_read_search", "syslog"], cmd),
                          pass_fds=(dir_fd,), capture_output=True, text=True)


# ---- The regions a recording can name (record --via memory) ----
# `jitframes record --via memory` keeps in its jitdump only the CODE_LOADs
# some sample may fall in (keep_sampled).
#
# perf inject --jit writes one jitted-PID-N.so per CODE_LOAD, and creating
# that many files is most of its time (a 20,000-region churning process:
# tens of seconds, mostly the file system allocating inodes), though most
# regions of a churning JIT are never sampled. A region is kept when an
# address a sample holds lies in it and it was the latest load covering that
# address at the sample's time (so perf would give it that address): the
# sampled IP, every callchain entry (frame pointers), and every aligned
# 8-byte word of the sampled user stack (DWARF call graphs: the return
# addresses into JIT callers are among them, so their regions and unwind
# data stay). A superset, never a loss. Whatever this cannot read (another
# sample layout, several event layouts, more candidate regions at one
# address than it looks at) keeps every region.
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
    at = _skip(body, at, 8) if sample_type & S_IDENTIFIER else at
    if sample_type & S_IP:
        ip, at = _u64(body, at)
        found.add(ip)
    at = _skip(body, at, 8) if sample_type & S_TID else at
    if sample_type & S_TIME:
        t, at = _u64(body, at)
    for bit in (S_ADDR, S_ID, S_STREAM_ID, S_CPU, S_PERIOD):
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
    h = _header(perf_data)
    sample_type, regs = _attrs(perf_data, h)
    index = Loads(loads)
    lo = min((addr for _, _, _, addr, _ in loads), default=0)
    hi = max((addr + size for _, _, _, addr, size in loads), default=0)
    used = set()
    for (rtype, _, _), body in _records(perf_data, h[5], h[6]):
        if rtype == SAMPLE:
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
    except (Unknown, InjectError, struct.error, ValueError):
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
