"""Run a helper of `jitframes record` so that it cannot write outside the
output directory, whatever it is told (perf inject follows paths and
symlinks the recorded process chose).

    jfrecord_confine.py DIR_FD UID CAPS -- COMMAND [ARGS...]

Run as root, before it executes COMMAND, with the working directory DIR_FD's:
- a mount namespace of its own in which every mount is read-only, nosuid
  and nodev (one recursive mount_setattr of "/"), the output directory
  (DIR_FD, bound onto itself) the only writable place; /dev/null, zero,
  random and urandom stay usable;
- every capability outside CAPS dropped from the bounding set, then the
  helper user (helper_uid(): a uid and gid no account has, never the
  target's, no supplementary group), keeping only CAPS (a comma list of
  names from CAPABILITIES, e.g. sys_ptrace to read the target's memory)
  as ambient capabilities; no_new_privs.
So a helper can neither write a file elsewhere (read-only, and no
capability that could remount) nor act as root (kill, connect to root's
sockets, open devices). Not root: COMMAND runs as the user, unconfined (it
can write nothing the user could not; the recorded process is the user's).
"""
import ctypes
import os
import sys

CLONE_NEWNS = 0x20000
MS_BIND, MS_REC, MS_PRIVATE = 0x1000, 0x4000, 1 << 18
MOUNT_ATTR_RDONLY, MOUNT_ATTR_NOSUID, MOUNT_ATTR_NODEV = 0x1, 0x2, 0x4
AT_FDCWD, AT_RECURSIVE = -100, 0x8000
SYS_MOUNT_SETATTR = 442  # the same number on every architecture
PR_CAPBSET_DROP, PR_SET_KEEPCAPS, PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT = 24, 8, 38, 47
PR_CAP_AMBIENT_RAISE = 2
CAP_V3 = 0x20080522
CAPABILITIES = {"dac_read_search": 2, "ipc_lock": 14, "sys_ptrace": 19, "syslog": 34, "perfmon": 38}
DEVICES = ("/dev/null", "/dev/zero", "/dev/random", "/dev/urandom")
HELPER_UID_BASE = 0x6A660000  # "jf" 0000: far above any account's uid

libc = ctypes.CDLL(None, use_errno=True)


class MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]


class CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


def helper_uid(target_uid):
    """The uid (and gid) helpers run as: one per recording, no account's,
    never the target's."""
    uid = HELPER_UID_BASE + (os.getpid() & 0xFFFF)
    return uid + 1 if uid == target_uid else uid


def _check(rc, what):
    if rc != 0:
        e = ctypes.get_errno()
        raise OSError(e, "%s: %s" % (what, os.strerror(e)))


def _mount(src, dst, flags):
    _check(libc.mount(src and src.encode(), dst.encode(), None, ctypes.c_ulong(flags), None),
           "mount %s" % dst)


def _setattr(path, flags, attr_set, attr_clr):
    attr = MountAttr(attr_set, attr_clr, 0, 0)
    _check(libc.syscall(SYS_MOUNT_SETATTR, AT_FDCWD, path.encode(), flags, ctypes.byref(attr),
                        ctypes.sizeof(attr)), "mount_setattr %s" % path)


def read_only_but(dir_fd):
    """A mount namespace where dir_fd's directory is the only writable place,
    and the working directory. (A descriptor opened before unshare refers to
    the old namespace's mounts: the directory is reached again by its path,
    proven to be dir_fd's, and dir_fd is closed.)"""
    os.fchdir(dir_fd)
    _check(libc.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    _mount(None, "/", MS_REC | MS_PRIVATE)  # nothing done here reaches the host
    here = os.getcwd()
    _mount(here, here, MS_BIND)
    os.chdir(here)  # onto the bind mount
    st, want = os.stat("."), os.fstat(dir_fd)
    if (st.st_dev, st.st_ino) != (want.st_dev, want.st_ino):
        raise OSError(0, "%s was replaced while it was being bound" % here)
    os.close(dir_fd)
    devices = [d for d in DEVICES if os.path.exists(d)]
    for d in devices:
        _mount(d, d, MS_BIND)
    locked = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV
    _setattr("/", AT_RECURSIVE, locked, 0)
    _setattr(".", 0, 0, MOUNT_ATTR_RDONLY)
    for d in devices:
        _setattr(d, 0, 0, MOUNT_ATTR_NODEV)


def become_helper(uid, caps):
    """Drop to uid/gid with only the capabilities `caps` (numbers), kept
    across exec as ambient capabilities."""
    last = int(open("/proc/sys/kernel/cap_last_cap").read())
    for cap in range(last + 1):
        if cap not in caps:
            _check(libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0), "drop capability %d" % cap)
    _check(libc.prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0), "keepcaps")
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    mask = [0, 0]
    for cap in caps:
        mask[cap // 32] |= 1 << (cap % 32)
    data = (CapData * 2)(*[CapData(m, m, m) for m in mask])
    _check(libc.capset(ctypes.byref(CapHeader(CAP_V3, 0)), data), "capset")
    for cap in caps:
        _check(libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0), "ambient %d" % cap)


def confine(dir_fd, uid, caps):
    """Everything above, in this process (about to exec the helper)."""
    if os.geteuid() != 0:
        os.fchdir(dir_fd)
        os.close(dir_fd)
        return
    read_only_but(dir_fd)
    become_helper(uid, caps)
    _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")


def command(dir_fd, uid, caps, argv):
    """argv run through this file (pass_fds must hold dir_fd)."""
    return [sys.executable, "-I", os.path.abspath(__file__), str(dir_fd), str(uid),
            ",".join(caps), "--"] + list(argv)


# Its own exit statuses when it cannot hand over (run with -I, it imports
# nothing from beside it, jfrecord_exit included): a bad command line, and
# what a shell says of a command it cannot run. Whoever runs it reports
# "cannot confine" itself; neither reaches `jitframes record`'s caller.
BAD_COMMAND_LINE = 2
CANNOT_RUN = 126


def main(argv):
    if len(argv) < 5 or argv[3] != "--":
        print("usage: jfrecord_confine.py DIR_FD UID CAPS -- COMMAND [ARGS...]", file=sys.stderr)
        return BAD_COMMAND_LINE
    try:
        caps = [CAPABILITIES[c] for c in argv[2].split(",") if c]
        confine(int(argv[0]), int(argv[1]), caps)
        os.execvp(argv[4], argv[4:])
    except (OSError, KeyError, ValueError) as e:
        print("jitframes record: cannot confine %s: %s" % (argv[4], e), file=sys.stderr)
        return CANNOT_RUN


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
