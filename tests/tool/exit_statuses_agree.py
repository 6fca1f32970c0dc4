#!/usr/bin/env python3
"""The jitframes command's exit statuses are one set: tools/cli/exit_status.h
for the C verbs, tools/record/jfrecord_exit.py for `record`'s scripts.

Checks that the two declare the same names with the same numbers, that the
record scripts name their statuses (no bare number given to fail() or
sys.exit(), none compared with a return code), that no C file of the tool
declares exit statuses of its own, and that the built tool returns the
header's numbers, `record` included (its script reads jfrecord_exit.py).

Usage: exit_statuses_agree.py SOURCE_DIR TOOL"""
import ast
import glob
import os
import re
import subprocess
import sys
import tempfile

src, tool = sys.argv[1], os.path.abspath(sys.argv[2])
problems = []


def header_statuses():
    with open(os.path.join(src, "tools", "cli", "exit_status.h")) as f:
        return {m.group(1): int(m.group(2)) for m in re.finditer(r"\bJFT_EXIT_(\w+) = (\d+)", f.read())}


def python_statuses():
    sys.dont_write_bytecode = True  # no __pycache__ in the sources
    sys.path.insert(0, os.path.join(src, "tools", "record"))
    import jfrecord_exit
    return {k: v for k, v in vars(jfrecord_exit).items() if k.isupper() and isinstance(v, int)}


def bare_numbers(path):
    """Where a script gives fail() or sys.exit() a number, or looks a
    return code up in a tuple of numbers."""
    tree = ast.parse(open(path).read(), path)
    where = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            args = list(node.args[1:] if name == "fail" else node.args if name == "exit" else [])
            args += [k.value for k in node.keywords if k.arg == "status"] if name == "fail" else []
            where += [a.lineno for a in args if isinstance(a, ast.Constant) and isinstance(a.value, int)]
        if (isinstance(node, ast.Compare) and any(isinstance(o, ast.In) for o in node.ops)
                and getattr(node.left, "attr", getattr(node.left, "id", "")) == "returncode"):
            for c in node.comparators:
                if isinstance(c, ast.Tuple) and any(isinstance(e, ast.Constant) and isinstance(e.value, int)
                                                    for e in c.elts):
                    where.append(c.lineno)
    return ["%s:%d" % (os.path.relpath(path, src), n) for n in sorted(where)]


c, py = header_statuses(), python_statuses()
if len(c) < 5:
    problems.append("tools/cli/exit_status.h declares %d JFT_EXIT_ statuses, expected 5: %s" % (len(c), c))
if c != py:
    problems.append("tools/cli/exit_status.h %s != tools/record/jfrecord_exit.py %s" % (c, py))
for script in ("jitframes-record.py", "jfrecord_target.py", "jfrecord_inject.py"):
    problems += ["bare exit status at " + w for w in bare_numbers(os.path.join(src, "tools", "record", script))]
for path in glob.glob(os.path.join(src, "tools", "cli", "*.c")):
    for m in re.finditer(r"enum\s*\w*\s*\{[^}]*\bEXIT_\w+\s*=", open(path).read()):
        problems.append("%s declares its own exit statuses: %s" % (os.path.relpath(path, src), m.group(0)))

# The built tool: one case per status, C verbs and the record script.
with tempfile.TemporaryDirectory(prefix="jf-exit-") as tmp:
    valid = os.path.join(tmp, "perf-1.map")
    with open(valid, "w") as f:
        f.write("1000 10 a\n")
    invalid = os.path.join(tmp, "perf-2.map")
    with open(invalid, "w") as f:
        f.write("1000 10 a\n1008 10 b\n")  # overlapping
    no_pid = str(2 ** 22 + 1)  # above pid_max's limit: never a process
    cases = [
        ("OK", ["check", valid]),
        ("FAILED", ["check", invalid]),
        ("USAGE", ["check", os.path.join(tmp, "absent")]),
        ("USAGE", ["frobnicate"]),
        ("UNREACHABLE", ["status", no_pid]),
        ("USAGE", ["record", "-o", tmp, str(os.getpid())]),  # an existing -o DIR
        ("UNREACHABLE", ["record", "-o", os.path.join(tmp, "rec"), no_pid]),
    ]
    for name, args in cases:
        p = subprocess.run([tool] + args, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           cwd=tmp, timeout=120)
        if p.returncode != c.get(name):
            problems.append("jitframes %s: exit status %d, expected %s (%s); stderr: %s"
                            % (" ".join(args), p.returncode, name, c.get(name), p.stderr.strip()[:300]))

for p in problems:
    print("FAIL: " + p, file=sys.stderr)
if problems:
    sys.exit(1)
print("exit statuses agree: %s" % ", ".join("%s=%d" % kv for kv in sorted(c.items(), key=lambda kv: kv[1])))
