"""python -m jitframes [--sinks LIST | --standby] (script.py | -m module) [args...]

Run a script or module with jitframes active, as `python -X perf` runs one
with CPython's trampolines. LIST defaults to $JITFRAMES (not under
python -E or -I), else perfmap.
--standby runs it with no sink and the control channel open instead
(jitframes.standby()): nothing is written until `jitframes record PID` or
`jitframes enable PID SINKS` turns sinks on from outside.
"""
import os
import runpy
import sys

import jitframes

USAGE = "usage: python -m jitframes [--sinks LIST | --standby] (script.py | -m module) [args...]"


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
    if not argv or argv[0] in ("-h", "--help") or (argv[0] == "-m" and len(argv) < 2):
        print(USAGE, file=sys.stderr)
        sys.exit(0 if argv and argv[0] in ("-h", "--help") else 2)
    return sinks, argv


def main():
    sinks, argv = parse(sys.argv[1:])
    try:
        if jitframes.is_active():  # already, from $JITFRAMES at start-up
            jitframes.deactivate()
        if sinks is None:
            jitframes.standby()
        else:
            jitframes.activate(sinks)
    except (ValueError, RuntimeError, OSError) as e:
        print("python -m jitframes: %s" % e, file=sys.stderr)
        sys.exit(2)
    if argv[0] == "-m":
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = argv
        sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))
        runpy.run_path(argv[0], run_name="__main__")


if __name__ == "__main__":
    main()
