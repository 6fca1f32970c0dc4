"""jitframes for CPython: every Python function gets its own native frame.

perf, gdb and lldb see an interpreted call as one anonymous eval-loop frame.
Once activated, each code object runs under its own jitframes trampoline,
named ``py::<qualname>:<filename>`` as CPython's ``-X perf`` names them, and
written to the chosen sinks:

    perfmap   /tmp/perf-<pid>.map            perf, bcc, bpftrace (names)
    jitdump   $JITFRAMES_DIR/jit-<pid>.dump  perf inject --jit (names, lines, unwinding)
    gdb       the GDB JIT interface          gdb and lldb (names, file:line, bt)
    unwind    the process's own unwinder     backtrace(), C++ exceptions

``python -m jitframes [--sinks LIST] script.py args...`` runs a program with
jitframes active, as ``activate()`` does from within. Start-up activation
from the library's own convention is opt-in: after ``python -m jitframes
--install-hook`` (a one-line ``jitframes.pth`` beside the package; not
installed by default, as site would compile it at every interpreter start),
``JITFRAMES=perfmap`` (any comma list of sinks) activates jitframes when
Python starts, and ``JITFRAMES_CONTROL=1`` starts it in standby
(``standby()``): nothing is written until ``jitframes enable PID perfmap`` or
``jitframes record PID`` turns a sink on from outside.
Under ``python -E`` and ``python -I`` every ``JITFRAMES*`` variable is
ignored (start-up activation, ``JITFRAMES_DIR``, ``JITFRAMES_LOG``).
"""
import sys

SUPPORTED = ((3, 11), (3, 12), (3, 13))

if sys.implementation.name != "cpython" or sys.version_info[:2] not in SUPPORTED:
    raise ImportError(
        "jitframes supports CPython %s; this is %s %d.%d"
        % (", ".join("%d.%d" % v for v in SUPPORTED), sys.implementation.name,
           sys.version_info[0], sys.version_info[1]))

try:
    from ._jitframes import activate, deactivate, standby, is_active, active_sinks, stats  # noqa: E402
    from ._jitframes import __version__  # noqa: E402,F401
except ModuleNotFoundError as e:
    if e.name != __name__ + "._jitframes":
        raise
    from . import _built_for  # noqa: E402
    raise ImportError(
        "this jitframes package was built for CPython %s (%s); this is %s %d.%d.%d (%s), which "
        "cannot load its C module (_jitframes%s). Build it for this interpreter: cmake -S "
        "<jitframes sources> -B build -DJITFRAMES_PYTHON_INTERPRETERS=%s && cmake --build build "
        "(the package: build/bindings/python/python%d.%d.%d/jitframes; or install it with cmake --install)"
        % (_built_for.VERSION, _built_for.INTERPRETER, sys.implementation.name, *sys.version_info[:3],
           sys.executable, _built_for.EXT_SUFFIX, sys.executable, *sys.version_info[:3]),
        name=__name__) from None

__all__ = ["activate", "deactivate", "standby", "is_active", "active_sinks", "stats"]


_environment_read = False


def _activate_from_environment():
    """Called at start-up by the opt-in hook (jitframes.pth imports
    jitframes._startup) when $JITFRAMES or $JITFRAMES_CONTROL is set. In a
    virtual environment site runs the .pth line twice (its venv() and main()
    both add the site-packages): the second call does nothing, so a warning
    is printed once. Under
    ``python -E`` or ``-I`` (sys.flags.ignore_environment) nothing is read,
    as the interpreter reads no PYTHON* variable."""
    global _environment_read
    if _environment_read or sys.flags.ignore_environment:
        return
    _environment_read = True
    import os
    sinks = os.environ.get("JITFRAMES", "").strip()
    control = os.environ.get("JITFRAMES_CONTROL", "").strip()
    # Never stop the program from starting: say why and run without.
    if control not in ("", "0"):
        try:
            standby()
        except (RuntimeError, OSError) as e:
            print("jitframes: no control channel from JITFRAMES_CONTROL=%s: %s" % (control, e),
                  file=sys.stderr)
    if not sinks or is_active():
        return
    try:
        activate(sinks)
    except (ValueError, RuntimeError, OSError) as e:
        print("jitframes: not activated from JITFRAMES=%s: %s" % (sinks, e), file=sys.stderr)
