"""The opt-in start-up hook: ``python -m jitframes --install-hook`` writes
jitframes.pth into the site-packages directory jitframes is installed in,
after which $JITFRAMES and $JITFRAMES_CONTROL activate every interpreter
started there; ``--remove-hook`` removes it, ``--hook-status`` says whether
it is on. Not installed by default: site reads every .pth file at every
start, and a line it must compile costs each start of ``python -c pass``
what COST says (bench/python/pth_cost.sh), jitframes used or not."""
import os
import site
import stat
import sys

NAME = "jitframes.pth"
# site exec()s a line starting "import "; its cost is compiling it, so it
# only tests the two names and jitframes._startup does the rest.
LINE = ("import os;'JITFRAMES'not in os.environ and'JITFRAMES_CONTROL'not in os.environ"
        " or __import__('jitframes._startup')\n")
# The line jitframes 0.2.0 installed with the package: ours to replace or remove.
EARLIER_LINES = (
    "import os, sys; ('JITFRAMES' in os.environ or 'JITFRAMES_CONTROL' in os.environ) and not "
    "sys.flags.ignore_environment and __import__('jitframes')._activate_from_environment()\n",
)
# What the hook adds to the instructions of `python -c pass` in a venv, per
# minor version (bench/python/pth_cost.sh: callgrind, against no .pth).
COST = {(3, 11): "+1.55%", (3, 12): "+1.57%", (3, 13): "+4.46%"}


class Refused(Exception):
    """The hook cannot be changed here; the message says why."""


def cost():
    return "%s instructions at each start of Python %d.%d, bench/python/pth_cost.sh" % (
        COST.get(sys.version_info[:2], "?"), *sys.version_info[:2])


def site_directory():
    """The site-packages directory jitframes is imported from, if site reads
    .pth files there (not a PYTHONPATH or build directory)."""
    import jitframes
    here = os.path.dirname(os.path.dirname(os.path.abspath(jitframes.__file__)))
    dirs = list(site.getsitepackages())
    if site.ENABLE_USER_SITE:
        dirs.append(site.getusersitepackages())
    if os.path.realpath(here) not in {os.path.realpath(d) for d in dirs}:
        raise Refused("jitframes is imported from %s, where site reads no .pth file (not this "
                      "interpreter's site-packages): install jitframes there first (pip install)" % here)
    return here


def state(path):
    """None (no file), "ours", "earlier" (an earlier version's line), or
    Refused for any other file of that name, a symbolic link included."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise Refused("%s is not jitframes' own hook (%s): left as it is" % (path, e.strerror)) from None
    try:
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
        content = os.read(fd, 4096) if regular else None
    finally:
        os.close(fd)
    if content == LINE.encode():
        return "ours"
    if content is not None and content.decode("utf-8", "replace") in EARLIER_LINES:
        return "earlier"
    raise Refused("%s is not jitframes' own hook: left as it is" % path)


def write_atomically(directory, path, replace):
    """The line into path: written to a temporary name (O_EXCL, O_NOFOLLOW,
    not *.pth so site never reads it half written), then linked to path,
    which fails if anything took the name meanwhile, or renamed over the
    earlier version's file when replace."""
    tmp = os.path.join(directory, ".%s.%d.tmp" % (NAME, os.getpid()))
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(LINE.encode())
            f.flush()
            os.fsync(f.fileno())
        if replace:
            os.replace(tmp, path)
        else:
            try:
                os.link(tmp, path)
            except FileExistsError:
                raise Refused("%s appeared meanwhile: left as it is" % path) from None
    finally:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass


def install():
    directory = site_directory()
    path = os.path.join(directory, NAME)
    found = state(path)
    if found != "ours":
        write_atomically(directory, path, replace=found == "earlier")
    return "jitframes: start-up hook %s: %s: JITFRAMES=SINKS and JITFRAMES_CONTROL=1 activate every " \
           "python started there; it costs %s" % ("already on" if found == "ours" else "on", path, cost())


def remove():
    directory = site_directory()
    path = os.path.join(directory, NAME)
    if state(path) is None:
        return "jitframes: start-up hook already off: no %s" % path
    os.unlink(path)
    return "jitframes: start-up hook off: removed %s; it cost %s" % (path, cost())


def status():
    """(is on, the line to print)."""
    directory = site_directory()
    path = os.path.join(directory, NAME)
    if state(path) is None:
        return False, "jitframes: start-up hook off: no %s; python -m jitframes --install-hook turns it " \
                      "on, for %s" % (path, cost())
    return True, "jitframes: start-up hook on: %s; it costs %s" % (path, cost())
