"""The CPython client's API and contracts, on the interpreter running this file.

Replays what CPython's Lib/test/test_perf_profiler.py asserts of `-X perf`
(names in the perf map, the sys API trio, forks) against jitframes, and
pins down what it promises beyond: errors, threads, recursion, start-up
activation, SIGKILL durability. Each scenario runs in a child process (a
fresh pid, so a fresh /tmp/perf-<pid>.map) of this same interpreter.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
import unittest

TOOL = os.environ.get("JITFRAMES_TOOL", "")
# Runs a program after removing a map a dead process with the same pid left
# in /tmp, so "no map written" means this child wrote none.
FRESH_MAP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support",
                         "exec_with_fresh_map.sh")
MAP_LINE = re.compile(r"^([0-9a-f]+) ([0-9a-f]+) (.+)$")


def perf_map_path(pid):
    return "/tmp/perf-%d.map" % pid


def read_map(pid):
    """The map's entries as (start, size, name); every line must be strict."""
    entries = []
    with open(perf_map_path(pid)) as f:
        for line in f.read().splitlines():
            if not line:  # space the writer reserved and has not used yet
                continue
            m = MAP_LINE.match(line)
            if not m:
                raise AssertionError("malformed perf map line %r" % line)
            entries.append((int(m.group(1), 16), int(m.group(2), 16), m.group(3)))
    return entries


def names(entries):
    return [e[2] for e in entries]


def run_tool(*args):
    """The jitframes tool. Under AddressSanitizer the interpreter runs with the
    sanitizer's runtime preloaded; the tool has its own linked in."""
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    return subprocess.run([TOOL] + list(args), capture_output=True, text=True, env=env)


class ChildCase(unittest.TestCase):
    """Runs Python snippets as scripts in child processes; removes their maps."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="jfpy-")
        self.pids = []      # what the children printed (pid=N), for the tests
        self.launched = []  # every child started, printing or not

    def tearDown(self):
        for pid in set(self.pids + self.launched):
            try:
                os.unlink(perf_map_path(pid))
            except FileNotFoundError:
                pass
        shutil.rmtree(self.tmp, ignore_errors=True)

    def script(self, source, name="script.py"):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(textwrap.dedent(source))
        return path

    def run_child(self, args, env=None, expect_status=0, python=None):
        """Run [python] + args; returns (stdout, stderr). The child prints
        its pid as 'pid=N' lines (more than one after a fork)."""
        full_env = dict(os.environ, JITFRAMES_DIR=self.tmp)
        full_env.pop("JITFRAMES", None)
        full_env.update(env or {})
        pid_file = os.path.join(self.tmp, "pid.%d" % len(self.launched))
        p = subprocess.run([FRESH_MAP, pid_file, python or sys.executable] + args, env=full_env,
                           capture_output=True, text=True, timeout=300)
        # Its map goes in tearDown even when it prints no pid (a child that
        # failed, or a test of something else): no litter in /tmp.
        with open(pid_file) as f:
            self.launched.append(int(f.read()))
        self.pids += [int(x) for x in re.findall(r"pid=(\d+)", p.stdout)]
        if expect_status is not None:
            self.assertEqual(p.returncode, expect_status,
                             "child exited %d\nstdout:\n%s\nstderr:\n%s"
                             % (p.returncode, p.stdout, p.stderr))
        return p.stdout, p.stderr

    def check_tool(self, path):
        """`jitframes check` accepts the file (skipped only if the tool is not built)."""
        if not TOOL:
            print("note: the jitframes tool is not built; %s not checked" % path)
            return ""
        p = run_tool("check", path)
        self.assertEqual(p.returncode, 0, "jitframes check %s: %s%s" % (path, p.stdout, p.stderr))
        return p.stdout


FOO_BAR_BAZ = """
    import os, jitframes
    def foo(n):
        x = 0
        for i in range(n):
            x += i
        return x
    def bar(n):
        return foo(n)
    def baz(n):
        return bar(n)
    print("pid=%d" % os.getpid())
"""


class PerfMapNames(ChildCase):
    def test_names_like_cpython(self):
        """The map has py::foo:<script>, py::bar:..., py::baz:... (hex, no 0x)."""
        path = self.script(FOO_BAR_BAZ + """
    jitframes.activate("perfmap")
    baz(1000)
""")
        out, _ = self.run_child([path])
        entries = read_map(self.pids[0])
        for fn in ("foo", "bar", "baz"):
            self.assertIn("py::%s:%s" % (fn, path), names(entries))
        self.check_tool(perf_map_path(self.pids[0]))

    def test_qualified_names_and_lambdas(self):
        path = self.script("""
    import os, jitframes
    class Outer:
        class Inner:
            def method(self):
                return (lambda: 1)()
    print("pid=%d" % os.getpid())
    jitframes.activate()
    Outer.Inner().method()
""")
        self.run_child([path])
        got = names(read_map(self.pids[0]))
        self.assertIn("py::Outer.Inner.method:%s" % path, got)
        self.assertIn("py::Outer.Inner.method.<locals>.<lambda>:%s" % path, got)

    def test_activate_deactivate_mid_run(self):
        """A function run only while inactive is absent; the rest are there."""
        path = self.script(FOO_BAR_BAZ + """
    def only_inactive():
        return 1
    def after():
        return 2
    jitframes.activate("perfmap")
    assert jitframes.is_active() and jitframes.active_sinks() == ("perfmap",)
    foo(10)
    jitframes.deactivate()
    assert not jitframes.is_active() and jitframes.active_sinks() == ()
    only_inactive()
    jitframes.activate("perfmap")
    after()
    foo(10)
""")
        self.run_child([path])
        got = names(read_map(self.pids[0]))
        self.assertIn("py::foo:%s" % path, got)
        self.assertIn("py::after:%s" % path, got)
        self.assertNotIn("py::only_inactive:%s" % path, got)
        self.assertEqual(got.count("py::foo:%s" % path), 1, "foo written once:\n%s" % got)

    def test_nothing_without_activation(self):
        path = self.script(FOO_BAR_BAZ + "    baz(10)\n")
        self.run_child([path])
        self.assertFalse(os.path.exists(perf_map_path(self.pids[0])))


class Errors(ChildCase):
    def test_clear_exceptions(self):
        path = self.script("""
    import jitframes
    def expect(exc, fn, *args):
        try:
            fn(*args)
        except exc as e:
            print("%s: %s" % (exc.__name__, e))
        else:
            raise SystemExit("no %s from %s%r" % (exc.__name__, fn.__name__, args))
    expect(RuntimeError, jitframes.deactivate)
    expect(ValueError, jitframes.activate, "perfmap,bogus")
    expect(ValueError, jitframes.activate, "")
    expect(TypeError, jitframes.activate, 42)
    assert not jitframes.is_active()
    jitframes.activate("perfmap")
    expect(RuntimeError, jitframes.activate, "perfmap")
    assert jitframes.is_active()
    jitframes.deactivate()
    expect(RuntimeError, jitframes.deactivate)
""")
        out, _ = self.run_child([path])
        self.assertIn("RuntimeError: jitframes is not active", out)
        self.assertIn("ValueError: jitframes: invalid sinks 'perfmap,bogus'", out)
        self.assertIn("RuntimeError: jitframes is already active", out)

    def test_unwritable_dump_dir_is_oserror(self):
        path = self.script("""
    import jitframes
    try:
        jitframes.activate("perfmap,jitdump")
    except OSError as e:
        print("OSError:", e)
    assert not jitframes.is_active()
    assert jitframes.stats()["sinks"]["perfmap"]["enabled"] is False
""")
        out, _ = self.run_child([path], env={"JITFRAMES_DIR": "/nonexistent/dir"})
        self.assertIn("OSError: jitframes: cannot start a sink", out)
        # Worded for the case, the code's text once (the library's message has it).
        self.assertIn("the directory /nonexistent/dir does not exist", out)
        self.assertEqual(out.count("(JF_ENOENT"), 1, out)

    def test_unsupported_version_is_import_error(self):
        out, _ = self.run_child(["-c", textwrap.dedent("""
    import sys
    sys.version_info = (3, 10, 0, "final", 0)
    try:
        import jitframes
    except ImportError as e:
        print("ImportError:", e)
""")])
        self.assertIn("ImportError: jitframes supports CPython 3.11, 3.12, 3.13; this is cpython 3.10",
                      out)

    def test_build_for_another_interpreter_says_which_and_how(self):
        """A package built for another interpreter (its C module has that
        one's suffix) names the interpreter it was built for and how to
        build it for this one."""
        package = os.path.dirname(__import__("jitframes").__file__)
        copy = os.path.join(self.tmp, "other", "jitframes")
        shutil.copytree(package, copy)
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        os.rename(os.path.join(copy, "_jitframes" + suffix),
                  os.path.join(copy, "_jitframes.cpython-399-x86_64-linux-gnu.so"))
        with open(os.path.join(copy, "_built_for.py"), "w") as f:
            f.write('VERSION = "3.99.0"\nINTERPRETER = "/opt/python3.99"\n'
                    'EXT_SUFFIX = ".cpython-399-x86_64-linux-gnu.so"\n')
        out, _ = self.run_child(["-c", textwrap.dedent("""
    try:
        import jitframes
    except ImportError as e:
        print("ImportError:", e)
""")], env={"PYTHONPATH": os.path.dirname(copy)})
        self.assertIn("ImportError: this jitframes package was built for CPython 3.99.0 (/opt/python3.99)", out)
        self.assertIn("this is cpython %d.%d.%d (%s)" % (*sys.version_info[:3], sys.executable), out)
        self.assertIn("-DJITFRAMES_PYTHON_INTERPRETERS=%s" % sys.executable, out)

    def test_another_evaluator_is_refused_and_kept(self):
        """Over another PEP 523 evaluator activate raises RuntimeError and
        leaves it installed; deactivate restores exactly the default one."""
        path = self.script("""
    import ctypes, jitframes
    api = ctypes.pythonapi
    api.PyInterpreterState_Get.restype = ctypes.c_void_p
    api._PyInterpreterState_GetEvalFrameFunc.restype = ctypes.c_void_p
    api._PyInterpreterState_GetEvalFrameFunc.argtypes = [ctypes.c_void_p]
    api._PyInterpreterState_SetEvalFrameFunc.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    interp = api.PyInterpreterState_Get()
    default = ctypes.cast(api._PyEval_EvalFrameDefault, ctypes.c_void_p).value
    other = ctypes.cast(api.PyLong_FromLong, ctypes.c_void_p).value  # never called
    get = api._PyInterpreterState_GetEvalFrameFunc
    assert get(interp) == default
    jitframes.activate()
    assert get(interp) != default
    jitframes.deactivate()
    assert get(interp) == default, "deactivate did not restore the default evaluator"
    # No Python function may be called while `other` is installed.
    api._PyInterpreterState_SetEvalFrameFunc(interp, other)
    try:
        jitframes.activate()
        message = None
    except RuntimeError as e:
        message = str(e)
    still_other = get(interp) == other
    api._PyInterpreterState_SetEvalFrameFunc(interp, default)
    print("refused:", message)
    print("kept:", still_other)
""")
        out, _ = self.run_child([path])
        self.assertIn("refused: jitframes: another frame evaluator (PEP 523) is installed", out)
        self.assertIn("kept: True", out)

    def test_subinterpreter_is_refused(self):
        """The code extra slot belongs to the main interpreter: a legacy
        subinterpreter (shared GIL) cannot activate."""
        path = self.script("""
    import _testcapi
    _testcapi.run_in_subinterp(
        "import jitframes\\n"
        "try:\\n"
        "    jitframes.activate()\\n"
        "except RuntimeError as e:\\n"
        "    print('refused:', e)\\n")
""")
        out, err = self.run_child([path])
        self.assertIn("refused: jitframes: only the main interpreter can be activated", out + err)

    @unittest.skipUnless(hasattr(sys, "activate_stack_trampoline"), "no -X perf before 3.12")
    def test_cpython_perf_trampoline_is_refused(self):
        path = self.script("""
    import sys, jitframes
    sys.activate_stack_trampoline("perf")
    try:
        jitframes.activate()
    except RuntimeError as e:
        print("refused:", e)
    print("cpython still active:", sys.is_stack_trampoline_active())
    sys.deactivate_stack_trampoline()
    jitframes.activate()
    print("after:", jitframes.is_active())
    try:
        sys.activate_stack_trampoline("perf")
    except RuntimeError as e:
        print("cpython refuses:", e)
""")
        out, _ = self.run_child([path])
        self.assertIn("refused: jitframes: another frame evaluator", out)
        self.assertIn("cpython still active: True", out)
        self.assertIn("after: True", out)
        self.assertIn("cpython refuses: Trampoline cannot be initialized", out)


class Fork(ChildCase):
    FORK = FOO_BAR_BAZ + """
    import sys
    def before():
        return 1
    def in_child():
        return 2
    def in_parent():
        return 3
    jitframes.activate(sys.argv[1])
    before()
    pid = os.fork()
    if pid == 0:
        print("pid=%d" % os.getpid(), flush=True)
        in_child()
        os._exit(0)
    in_parent()
    _, status = os.waitpid(pid, 0)
    assert status == 0
"""

    def test_child_gets_its_own_map(self):
        """Child: its own map with the inherited trampolines (identical lines)
        and its own functions; neither process writes the other's file."""
        path = self.script(self.FORK)
        self.run_child([path, "perfmap"])
        parent, child = self.pids
        pm, cm = read_map(parent), read_map(child)
        before = "py::before:%s" % path
        self.assertEqual([e for e in pm if e[2] == before], [e for e in cm if e[2] == before])
        self.assertIn("py::in_child:%s" % path, names(cm))
        self.assertNotIn("py::in_child:%s" % path, names(pm))
        self.assertIn("py::in_parent:%s" % path, names(pm))
        self.assertNotIn("py::in_parent:%s" % path, names(cm))
        self.check_tool(perf_map_path(parent))
        self.check_tool(perf_map_path(child))

    def test_child_gets_its_own_jitdump(self):
        path = self.script(self.FORK)
        self.run_child([path, "jitdump"])
        for pid in self.pids:
            dump = os.path.join(self.tmp, "jit-%d.dump" % pid)
            self.assertTrue(os.path.exists(dump), "no %s" % dump)
            self.check_tool(dump)

    def test_multiprocessing_workers(self):
        path = self.script("""
    import multiprocessing as mp, os, jitframes
    def work(x):
        print("pid=%d" % os.getpid(), flush=True)
        return x * 2
    if __name__ == "__main__":
        print("pid=%d" % os.getpid(), flush=True)
        jitframes.activate()
        ctx = mp.get_context("fork")
        with ctx.Pool(2) as pool:
            assert pool.map(work, range(8)) == [x * 2 for x in range(8)]
""")
        self.run_child([path])
        workers = set(self.pids[1:])
        self.assertTrue(workers)
        for pid in workers:
            self.assertIn("py::work:%s" % path, names(read_map(pid)))


class Lifetime(ChildCase):
    LIFETIME = """
    import gc, sys, jitframes
    jitframes.activate(sys.argv[1])
    def churn():
        for i in range(2000):
            ns = {}
            exec("def short_lived():\\n    return %d\\n" % i, ns)
            ns["short_lived"]()
        gc.collect()
    churn()
    base = jitframes.stats()["live_regions"]
    churn()
    print("growth=%d" % (jitframes.stats()["live_regions"] - base))
    print("created=%d" % jitframes.stats()["trampolines_created"])
"""

    def test_trampolines_die_with_their_code_objects(self):
        """Without the perf map, a dead code object's trampoline is destroyed
        (and its copy reused): 2,000 more short-lived functions leave the
        number of live regions where it was."""
        out, _ = self.run_child([self.script(self.LIFETIME), "jitdump,gdb"])
        self.assertIn("growth=0", out)
        self.assertGreaterEqual(int(re.search(r"created=(\d+)", out).group(1)), 4000)

    def test_perf_map_never_reuses_an_address(self):
        """With the perf map they are kept: no address names two functions."""
        path = self.script(self.LIFETIME.replace('jitframes.activate(sys.argv[1])',
                                                 'jitframes.activate(sys.argv[1])\n    import os\n'
                                                 '    print("pid=%d" % os.getpid())'))
        out, _ = self.run_child([path, "perfmap"])
        self.assertGreaterEqual(int(re.search(r"growth=(\d+)", out).group(1)), 2000)
        entries = read_map(self.pids[0])
        self.assertEqual(len(set(e[0] for e in entries)), len(entries))
        self.check_tool(perf_map_path(self.pids[0]))


class Threads(ChildCase):
    def test_threads_creating_functions(self):
        """8 threads each compile and call 500 new functions at once."""
        path = self.script("""
    import os, threading, jitframes
    print("pid=%d" % os.getpid())
    jitframes.activate("perfmap,jitdump,gdb")
    def worker(t):
        for i in range(500):
            ns = {}
            exec("def t%d_f%d(x):\\n    return x + %d\\n" % (t, i, i), ns)
            assert ns["t%d_f%d" % (t, i)](1) == i + 1
    threads = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
    for t in threads: t.start()
    for t in threads: t.join()
""")
        self.run_child([path])
        got = names(read_map(self.pids[0]))
        for t in range(8):
            for i in range(500):
                self.assertIn("py::t%d_f%d:<string>" % (t, i), got)
        self.check_tool(perf_map_path(self.pids[0]))
        self.check_tool(os.path.join(self.tmp, "jit-%d.dump" % self.pids[0]))


class Recursion(ChildCase):
    def test_deep_recursion_raises_recursion_error(self):
        """Under the hook every Python call also recurses in C: with the
        limit raised far past what the C stack holds, a runaway recursion
        must end in RecursionError (3.11 has no C limit of its own), and the
        interpreter must work normally afterwards."""
        path = self.script("""
    import sys, jitframes
    def down(n):
        return down(n + 1) + 1
    def depth():
        try:
            down(0)
        except RecursionError as e:
            return str(e)
    sys.setrecursionlimit(10 ** 6)
    jitframes.activate("perfmap")
    print("first:", depth())
    print("second:", depth())
    print("after:", sum(range(10)))
""")
        out, _ = self.run_child([path])
        self.assertIn("first: maximum recursion depth exceeded", out)
        self.assertIn("second: maximum recursion depth exceeded", out)
        self.assertIn("after: 45", out)

    def test_recursion_in_a_thread(self):
        path = self.script("""
    import sys, threading, jitframes
    def down(n):
        return down(n + 1) + 1
    result = []
    def run():
        try:
            down(0)
        except RecursionError:
            result.append("RecursionError")
    sys.setrecursionlimit(10 ** 6)
    threading.stack_size(1 << 20)
    jitframes.activate("perfmap")
    t = threading.Thread(target=run)
    t.start(); t.join()
    print("thread:", result)
""")
        out, _ = self.run_child([path])
        self.assertIn("thread: ['RecursionError']", out)


class StartUp(ChildCase):
    SCRIPT = FOO_BAR_BAZ + """
    import sys
    print("argv=%r" % sys.argv[1:])
    print("active=%r" % (jitframes.active_sinks(),))
    baz(10)
"""

    def test_python_m_jitframes(self):
        path = self.script(self.SCRIPT)
        out, _ = self.run_child(["-m", "jitframes", "--sinks", "perfmap,jitdump", path, "a", "-b"])
        self.assertIn("argv=['a', '-b']", out)
        self.assertIn("active=('perfmap', 'jitdump')", out)
        self.assertIn("py::baz:%s" % path, names(read_map(self.pids[0])))
        self.check_tool(os.path.join(self.tmp, "jit-%d.dump" % self.pids[0]))

    def test_python_m_jitframes_takes_sinks_from_environment(self):
        path = self.script(self.SCRIPT)
        out, _ = self.run_child(["-m", "jitframes", path], env={"JITFRAMES": "jitdump"})
        self.assertIn("active=('jitdump',)", out)

    def test_python_m_jitframes_usage(self):
        _, err = self.run_child(["-m", "jitframes"], expect_status=2)
        self.assertIn("usage: python -m jitframes", err)
        _, err = self.run_child(["-m", "jitframes", "--sinks", "nope", "x.py"], expect_status=2)
        self.assertIn("invalid sinks 'nope'", err)

    def test_python_m_jitframes_version_and_missing_program_in_one_line(self):
        out, err = self.run_child(["-m", "jitframes", "--version"])
        self.assertRegex(out, r"^jitframes \d+\.\d+\.\d+\n$")
        self.assertEqual(err, "")
        for args, says in ((["missing.py"], "can't open file 'missing.py'"),
                           (["-m", "no_such_module_here"], "no module named no_such_module_here"),
                           (["--bogus"], "unknown option --bogus")):
            _, err = self.run_child(["-m", "jitframes"] + args, expect_status=2)
            self.assertEqual(err.count("\n"), 1, err)
            self.assertIn("python -m jitframes: " + says, err)

    def installed_venv(self, hook=True):
        """A venv with the package in its site-packages as the wheel installs
        it (no .pth file), and with hook the opt-in start-up hook installed
        as users do: `python -m jitframes --install-hook`. Its python; its
        site-packages in self.site."""
        venv = os.path.join(self.tmp, "venv")
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
        python = os.path.join(venv, "bin", "python")
        self.site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['platlib'])"],
                                   capture_output=True, text=True, check=True).stdout.strip()
        package = os.path.dirname(__import__("jitframes").__file__)
        shutil.copytree(package, os.path.join(self.site, "jitframes"),
                        ignore=shutil.ignore_patterns("__pycache__"))
        if hook:
            out, _ = self.run_child(["-m", "jitframes", "--install-hook"], env={"PYTHONPATH": ""}, python=python)
            self.assertIn("start-up hook on", out)
        return python

    def test_installed_hook_activates_from_JITFRAMES(self):
        """With the hook installed (here into a venv), `JITFRAMES=perfmap
        python script.py` activates at start-up; a bad value warns and the
        program still runs."""
        python = self.installed_venv()
        env = {"PYTHONPATH": ""}
        path = self.script(self.SCRIPT)
        out, _ = self.run_child([path], env=dict(env, JITFRAMES="perfmap"), python=python)
        self.assertIn("active=('perfmap',)", out)
        self.assertIn("py::baz:%s" % path, names(read_map(self.pids[-1])))
        out, err = self.run_child([path], env=dict(env, JITFRAMES="perfmap,nope"), python=python)
        self.assertIn("active=()", out)
        # Once: site runs a venv's .pth files twice (venv() and main() both add its site-packages).
        self.assertEqual(err.count("jitframes: not activated from JITFRAMES=perfmap,nope"), 1, err)
        out, _ = self.run_child([path], env=env, python=python)
        self.assertIn("active=()", out)

    # Whether site imported jitframes before the program, and what it turned on.
    PROBE = """
    import os, sys
    imported = "jitframes" in sys.modules
    import jitframes
    with open("/proc/net/unix") as f:
        channel = "@jitframes/%d." % os.getpid() in f.read()
    print("pid=%d" % os.getpid())
    print("imported=%r active=%r channel=%r" % (imported, jitframes.active_sinks(), channel))
"""

    def test_installed_hook_imports_nothing_without_a_variable_and_activates_nothing_under_E_and_I(self):
        """With the hook, JITFRAMES_CONTROL=1 imports jitframes at start-up
        and opens the channel; no variable imports nothing; python -E / -I
        ignore the environment: nothing activated, no channel."""
        python = self.installed_venv()
        probe = self.script(self.PROBE, name="probe.py")
        for flags, env, says in (([], {"JITFRAMES_CONTROL": "1"}, "imported=True active=() channel=True"),
                                 ([], {}, "imported=False active=() channel=False"),
                                 (["-E"], {"JITFRAMES": "jitdump"}, "active=() channel=False"),
                                 (["-E"], {"JITFRAMES_CONTROL": "1"}, "active=() channel=False"),
                                 (["-I"], {"JITFRAMES": "jitdump"}, "active=() channel=False"),
                                 (["-I"], {"JITFRAMES_CONTROL": "1"}, "active=() channel=False")):
            out, _ = self.run_child(flags + [probe], env=dict(env, PYTHONPATH=""), python=python)
            self.assertIn(says, out, (flags, env))

    def pth_files(self):
        return sorted(f for f in os.listdir(self.site) if f.endswith(".pth"))

    def hook(self, python, option, expect_status=0):
        """python -m jitframes OPTION: its one line (stdout, else stderr)."""
        out, err = self.run_child(["-m", "jitframes", option], env={"PYTHONPATH": ""}, python=python,
                                  expect_status=expect_status)
        line = out or err
        self.assertEqual(line.count("\n"), 1, (option, out, err))
        return line

    def test_default_install_has_no_start_up_hook_and_install_hook_turns_it_on(self):
        """As installed (no .pth), an interpreter started with JITFRAMES and
        JITFRAMES_CONTROL set imports no jitframes module and activates
        nothing; `--install-hook` adds jitframes.pth (and nothing else), after
        which the same start activates; `--remove-hook` puts the directory
        back as it was. Each prints one line saying what the hook costs."""
        python = self.installed_venv(hook=False)
        self.assertEqual(self.pth_files(), [])
        before = sorted(os.listdir(self.site))
        probe = self.script(self.PROBE, name="probe.py")
        env = {"PYTHONPATH": "", "JITFRAMES": "perfmap", "JITFRAMES_CONTROL": "1"}
        out, _ = self.run_child([probe], env=env, python=python)
        self.assertIn("imported=False active=() channel=False", out)
        self.assertFalse(os.path.exists(perf_map_path(self.pids[-1])))
        self.assertRegex(self.hook(python, "--hook-status", expect_status=1), r"hook off: .*instructions")
        self.assertRegex(self.hook(python, "--install-hook"),
                         r"^jitframes: start-up hook on: %s/jitframes.pth: .* \+\d+\.\d+%% instructions at "
                         r"each start of Python 3\.1\d" % re.escape(self.site))
        self.assertEqual(sorted(os.listdir(self.site)), sorted(before + ["jitframes.pth"]))
        with open(os.path.join(self.site, "jitframes.pth")) as f:
            self.assertRegex(f.read(), r"^import os;[^\n]*\n$")
        self.assertIn("already on", self.hook(python, "--install-hook"))
        self.assertRegex(self.hook(python, "--hook-status"), r"hook on: .*instructions")
        out, _ = self.run_child([probe], env=env, python=python)
        self.assertIn("imported=True active=('perfmap',) channel=True", out)
        self.assertTrue(os.path.exists(perf_map_path(self.pids[-1])))
        self.assertIn("hook off: removed", self.hook(python, "--remove-hook"))
        self.assertEqual(sorted(os.listdir(self.site)), before)
        self.assertIn("already off", self.hook(python, "--remove-hook"))
        out, _ = self.run_child([probe], env=env, python=python)
        self.assertIn("imported=False active=() channel=False", out)

    def test_hook_options_refuse_a_jitframes_pth_not_their_own(self):
        """A foreign jitframes.pth, a symbolic link (even to a copy of the
        hook's own line) or a directory of that name: --install-hook,
        --remove-hook and --hook-status refuse in one line, exit 1, and leave
        it, and what a link points to, as they were."""
        python = self.installed_venv(hook=False)
        pth = os.path.join(self.site, "jitframes.pth")
        self.hook(python, "--install-hook")
        with open(pth) as f:
            line = f.read()
        self.hook(python, "--remove-hook")
        target = os.path.join(self.tmp, "target.pth")
        with open(target, "w") as f:
            f.write(line)

        def foreign():
            with open(pth, "w") as f:
                f.write("import sys\n")

        def link():
            os.symlink(target, pth)

        def dangling():
            os.symlink(os.path.join(self.tmp, "nothing-here"), pth)

        for make, kind in ((foreign, "file"), (link, "link"), (dangling, "link"), (lambda: os.mkdir(pth), "dir")):
            make()
            for option in ("--install-hook", "--remove-hook", "--hook-status"):
                err = self.hook(python, option, expect_status=1)
                self.assertIn("python -m jitframes: %s is not jitframes' own hook" % pth, err)
            if kind == "file":
                with open(pth) as f:
                    self.assertEqual(f.read(), "import sys\n")
                os.unlink(pth)
            elif kind == "link":
                self.assertTrue(os.path.islink(pth))
                os.unlink(pth)
            else:
                self.assertTrue(os.path.isdir(pth))
                os.rmdir(pth)
        with open(target) as f:
            self.assertEqual(f.read(), line)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "nothing-here")))
        self.assertEqual(self.pth_files(), [])

    def test_install_hook_replaces_and_remove_hook_removes_the_hook_0_2_0_installed(self):
        """The jitframes.pth the package installed until 0.2.0 is jitframes'
        own: --install-hook replaces it with the cheaper line, --remove-hook
        removes it."""
        python = self.installed_venv(hook=False)
        pth = os.path.join(self.site, "jitframes.pth")
        old = ("import os, sys; ('JITFRAMES' in os.environ or 'JITFRAMES_CONTROL' in os.environ) and not "
               "sys.flags.ignore_environment and __import__('jitframes')._activate_from_environment()\n")
        with open(pth, "w") as f:
            f.write(old)
        self.assertIn("hook on", self.hook(python, "--install-hook"))
        with open(pth) as f:
            new = f.read()
        self.assertNotEqual(new, old)
        self.assertLess(len(new), len(old))
        with open(pth, "w") as f:
            f.write(old)
        self.assertIn("hook off: removed", self.hook(python, "--remove-hook"))
        self.assertEqual(self.pth_files(), [])

    def test_install_hook_refuses_a_package_site_does_not_read_pth_files_beside(self):
        """jitframes imported from a PYTHONPATH directory (a build tree): no
        .pth file there would ever run, so --install-hook refuses and writes
        none, there or in the venv's site-packages."""
        python = self.installed_venv(hook=False)
        other = os.path.join(self.tmp, "other")
        shutil.copytree(os.path.join(self.site, "jitframes"), os.path.join(other, "jitframes"))
        _, err = self.run_child(["-m", "jitframes", "--install-hook"], env={"PYTHONPATH": other},
                                python=python, expect_status=1)
        self.assertIn("jitframes is imported from %s, where site reads no .pth file" % other, err)
        self.assertEqual(err.count("\n"), 1, err)
        self.assertEqual(sorted(os.listdir(other)), ["jitframes"])
        self.assertEqual(self.pth_files(), [])

    def test_python_E_and_I_ignore_every_JITFRAMES_variable(self):
        """`python -E` and `python -I` read no JITFRAMES* variable: the
        start-up hook activates nothing (no /tmp/perf-PID.map), JITFRAMES_CONTROL
        opens no channel, `-m jitframes` does not take its sinks from
        JITFRAMES, and activate() writes its dump to /tmp, not to
        JITFRAMES_DIR, nor prints what JITFRAMES_LOG asks. The control: the
        same without -E activates and writes the map."""
        python = self.installed_venv()
        env = {"PYTHONPATH": "", "JITFRAMES": "perfmap", "JITFRAMES_CONTROL": "1"}
        # The control channel is an abstract socket named jitframes/<pid>.<random>.
        path = self.script(self.SCRIPT + """
    with open("/proc/net/unix") as f:
        print("channel=%r" % ("@jitframes/%d." % os.getpid() in f.read()))
""")
        out, _ = self.run_child([path], env=env, python=python)
        self.assertIn("active=('perfmap',)", out)
        self.assertIn("channel=True", out)
        self.assertTrue(os.path.exists(perf_map_path(self.pids[-1])))
        for flag in ("-E", "-I"):
            out, err = self.run_child([flag, path], env=env, python=python)
            self.assertIn("active=()", out, flag)
            self.assertIn("channel=False", out, flag)
            self.assertFalse(os.path.exists(perf_map_path(self.pids[-1])), flag)
            out, _ = self.run_child([flag, "-m", "jitframes", path], env=dict(env, JITFRAMES="jitdump"),
                                    python=python)
            self.assertIn("active=('perfmap',)", out, flag)
        dumps = os.path.join(self.tmp, "dumps")
        os.mkdir(dumps)
        explicit = self.script("""
    import os, jitframes
    print("pid=%d" % os.getpid())
    jitframes.activate("jitdump")
    print("exists=%r" % os.path.exists("/tmp/jit-%d.dump" % os.getpid()))
    os.unlink("/tmp/jit-%d.dump" % os.getpid())
""", name="explicit.py")
        out, err = self.run_child(["-E", explicit], python=python,
                                  env={"PYTHONPATH": "", "JITFRAMES_DIR": dumps, "JITFRAMES_LOG": "info"})
        self.assertIn("exists=True", out)
        self.assertEqual(os.listdir(dumps), [])
        self.assertNotIn("jitframes", err)


class SigKill(ChildCase):
    def test_sigkill_after_10000_functions(self):
        """Killed right after defining and calling 10,000 functions, the
        process leaves a map and a dump holding every one, both valid."""
        path = self.script("""
    import os, signal, jitframes
    print("pid=%d" % os.getpid(), flush=True)
    jitframes.activate("perfmap,jitdump")
    src = "".join("def f%d():\\n    return %d\\n" % (i, i) for i in range(10000))
    ns = {}
    exec(compile(src, "generated.py", "exec"), ns)
    for i in range(10000):
        ns["f%d" % i]()
    os.kill(os.getpid(), signal.SIGKILL)
""")
        self.run_child([path], expect_status=-signal.SIGKILL)
        pid = self.pids[0]
        got = set(names(read_map(pid)))
        missing = [i for i in range(10000) if "py::f%d:generated.py" % i not in got]
        self.assertEqual(missing, [], "functions missing from the map")
        self.check_tool(perf_map_path(pid))
        dump = os.path.join(self.tmp, "jit-%d.dump" % pid)
        summary = self.check_tool(dump)
        if TOOL:
            loads = int(re.search(r"\((\d+) loads", summary).group(1))
            self.assertGreaterEqual(loads, 10000, summary)
            listing = run_tool("dump", dump).stdout
            in_dump = set(re.findall(r'name "py::(f\d+):generated.py"', listing))
            self.assertEqual(len(in_dump), 10000)


if __name__ == "__main__":
    print("interpreter: %s %s" % (sys.executable, sys.version.split()[0]))
    unittest.main()
