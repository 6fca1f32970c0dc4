"""python -m jitframes [--sinks LIST | --standby] (script.py | -m module) [args...]
python -m jitframes --version
python -m jitframes (--install-hook | --remove-hook | --hook-status)

Run a script or module with jitframes active, as `python -X perf` runs one
with CPython's trampolines. LIST defaults to $JITFRAMES (not under
python -E or -I), else perfmap.
--standby runs it with no sink and the control channel open instead
(jitframes.standby()): nothing is written until `jitframes record PID` or
`jitframes enable PID SINKS` turns sinks on from outside. A script or module
that cannot be found is one line and exit status 2, as for python itself;
what the program raises is its own traceback.
--install-hook writes the opt-in start-up hook (jitframes.pth) into the
site-packages jitframes is installed in, after which JITFRAMES=SINKS and
JITFRAMES_CONTROL=1 activate every python started there; --remove-hook
removes it, --hook-status says whether it is on (exit status 0 on, 1 off).
Each prints one line with what the hook costs every interpreter start
(jitframes/_hook.py). A file of that name that is not jitframes' own is
refused and left as it is (exit status 1).
"""
import importlib.util
import os
import runpy
import sys

import jitframes

USAGE = ("usage: python -m jitframes [--sinks LIST | --standby] (script.py | -m module) [args...]\n"
         "       python -m jitframes --version\n"
         "       python -m jitframes (--install-hook | --remove-hook | --hook-status)")
HOOK_OPTIONS = ("--install-hook", "--remove-hook", "--hook-status")


def die(message):
    print("python -m jitframes: %s" % message, file=sys.stderr)
    sys.exit(2)


def parse(argv):
    """(sinks, argv); sinks is None for --standby."""
    from_env = "" if sys.flags.ignore_environment else os.environ.get("JITFRAMES", "")
    sinks = from_env.strip() or "perfmap"
    while argv and (argv[0].startswith("--sinks") or argv[0] == "--standby"):
        if argv[0] == "--standby":
            sinks, argv = None, argv[1:]
        elif argv[0] == "--sinks" and len(argv) > 1:
            sinks, argv = argv[1], argv[2:]
        elif argv[0].startswith("--sinks="):
            sinks, argv = argv[0][len("--sinks="):], argv[1:]
        else:
            break
    if argv and argv[0] in ("-V", "--version"):
        print("jitframes %s" % jitframes.__version__)
        sys.exit(0)
    if not argv or argv[0] in ("-h", "--help") or (argv[0] == "-m" and len(argv) < 2):
        print(USAGE, file=sys.stderr)
        sys.exit(0 if argv and argv[0] in ("-h", "--help") else 2)
    if argv[0] != "-m" and argv[0].startswith("-"):
        die("unknown option %s (python -m jitframes --help)" % argv[0])
    return sinks, argv


def check_runnable(argv):
    """One line and exit 2 for a script or module that is not there."""
    if argv[0] == "-m":
        try:
            found = importlib.util.find_spec(argv[1]) is not None
        except (ImportError, ValueError) as e:
            die("no module %s: %s" % (argv[1], e))
        if not found:
            die("no module named %s" % argv[1])
    elif not os.path.isfile(argv[0]) and not os.path.isdir(argv[0]):
        die("can't open file %r: no such file" % argv[0])


def hook(option):
    """--install-hook, --remove-hook, --hook-status: one line, an exit status."""
    from jitframes import _hook
    try:
        if option == "--hook-status":
            on, line = _hook.status()
            print(line)
            sys.exit(0 if on else 1)
        print(_hook.install() if option == "--install-hook" else _hook.remove())
    except (_hook.Refused, OSError) as e:
        print("python -m jitframes: %s" % e, file=sys.stderr)
        sys.exit(1)
    sys.exit(0)


def main():
    if len(sys.argv) == 2 and sys.argv[1] in HOOK_OPTIONS:
        hook(sys.argv[1])
    sinks, argv = parse(sys.argv[1:])
    try:
        if jitframes.is_active():  # already, from $JITFRAMES at start-up
            jitframes.deactivate()
        if sinks is None:
            jitframes.standby()
        else:
            jitframes.activate(sinks)
    except (ValueError, RuntimeError, OSError) as e:
        die(e)
    check_runnable(argv)
    if argv[0] == "-m":
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = argv
        sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))
        runpy.run_path(argv[0], run_name="__main__")


if __name__ == "__main__":
    main()
