#!/usr/bin/env python3
"""The source tree's rooms are what README.md's "Layout" and
docs/architecture.md say they are.

- tools/ holds its rooms only (folders, besides its CMakeLists.txt and
  README.md), and each room is named in README.md's layout and in
  docs/architecture.md;
- every folder README.md's layout names exists;
- every tools/... and src/host|arch/... path docs/architecture.md names exists;
- no compiled Python is tracked (git ls-files, when SOURCE_DIR is a git
  checkout) and .gitignore ignores __pycache__/.

Usage: layout_is_documented.py SOURCE_DIR"""
import os
import re
import subprocess
import sys

src = sys.argv[1]
problems = []


def read(rel):
    with open(os.path.join(src, rel)) as f:
        return f.read()


readme = read("README.md")
layout = re.search(r"^## Layout\n+```\n(.*?)```", readme, re.S | re.M)
if not layout:
    sys.exit("FAIL: README.md has no ## Layout block")
named = re.findall(r"^(\S+/)\s", layout.group(1), re.M)
for d in named:
    if not os.path.isdir(os.path.join(src, d)):
        problems.append("README.md's layout names %s, which does not exist" % d)

architecture = read("docs/architecture.md")
tools = os.path.join(src, "tools")
for entry in sorted(os.listdir(tools)):
    if entry in ("CMakeLists.txt", "README.md"):
        continue
    if not os.path.isdir(os.path.join(tools, entry)):
        problems.append("tools/%s is not in a room (tools/cli, readers, record, ebpf)" % entry)
        continue
    room = "tools/%s/" % entry
    if room not in named:
        problems.append("README.md's layout does not name %s" % room)
    if room not in architecture:
        problems.append("docs/architecture.md does not name %s" % room)

for path in sorted(set(re.findall(r"\b((?:tools|src/host|src/arch)/[\w./-]*\w)", architecture))):
    if not os.path.exists(os.path.join(src, path)):
        problems.append("docs/architecture.md names %s, which does not exist" % path)

if not re.search(r"^/?__pycache__/?$", read(".gitignore"), re.M):
    problems.append(".gitignore has no __pycache__/ rule")
if os.path.exists(os.path.join(src, ".git")):
    tracked = subprocess.run(["git", "-C", src, "ls-files"], capture_output=True, text=True, check=True).stdout
    problems += ["compiled Python is tracked: " + f for f in tracked.splitlines()
                 if f.endswith(".pyc") or "__pycache__" in f.split("/")]

for p in problems:
    print("FAIL: " + p, file=sys.stderr)
if problems:
    sys.exit(1)
print("layout: %d rooms of tools/, %d folders in README.md's layout, all documented" %
      (len([e for e in os.listdir(tools) if os.path.isdir(os.path.join(tools, e))]), len(named)))
